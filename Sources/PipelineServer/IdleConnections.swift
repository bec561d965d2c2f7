#if Server
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Closes a connection that has done nothing for the idle timeout: read no part of a request,
/// and had no answer's bytes taken by the client. Hummingbird's own idle timer counts only
/// reads, and starts again when an answer's end is handed to the connection, bytes still queued
/// behind it, so a large answer sent to a slow but steady client was cut off part-way.
///
/// A piece of a large answer (`ResponseBody.pieceBytes`) counts when the client has taken it;
/// a smaller write, when it is handed over (it fits the socket's buffers). A request whose
/// answer is still being made (a cold run) is not idle: its deadline governs it; nor is one
/// whose answer the connection could take more of (the server, busy, is the slow side).
final class IdleConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var lastActivity = NIODeadline.now()
    private var timer: Scheduled<Void>?
    /// Requests read whose answer's end has not been written.
    private var unanswered = 0
    /// Whether a request's head has come and its end not yet.
    private var readingRequest = false
    /// Whether an answer's head has been written and its end not yet.
    private var sendingAnswer = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            readingRequest = true
        case .end: readingRequest = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        lastActivity = .now()
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational: sendingAnswer = true
        case .body(let piece) where piece.readableBytes >= ResponseBody.pieceBytes:
            let taken = promise ?? context.eventLoop.makePromise()
            taken.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in self.lastActivity = .now() }
            context.write(data, promise: taken)
            return
        case .end:
            unanswered = max(0, unanswered - 1)
            sendingAnswer = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        lastActivity = .now()
        schedule(context, at: lastActivity + timeout)
    }

    /// When a connection found not to be closed yet is looked at again: once it would have been
    /// idle for the timeout (`due`, from its last byte), or, that being past while an answer is
    /// made, a timeout later.
    static func nextCheck(due: NIODeadline, now: NIODeadline, timeout: TimeAmount) -> NIODeadline {
        due > now ? due : now + timeout
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: deadline) {
            self.timer = nil
            guard context.channel.isActive else { return }
            let due = self.lastActivity + self.timeout
            // Idle, and waiting neither for an answer being made nor for the server to send more.
            let clientStalled = self.sendingAnswer && !context.channel.isWritable
            if due <= .now(), self.unanswered == 0 || self.readingRequest || clientStalled {
                context.close(promise: nil)
                return
            }
            self.schedule(context, at: Self.nextCheck(due: due, now: .now(), timeout: self.timeout))
        }
    }
}

@available(*, unavailable)
extension IdleConnectionCloser: Sendable {}
#endif
