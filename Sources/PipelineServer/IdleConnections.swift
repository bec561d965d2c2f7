#if Server
import Foundation
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Closes a connection that has done nothing for the idle timeout: read no part of a request,
/// and had no answer's bytes taken by the client. Hummingbird's own idle timer counts only
/// reads, and starts again when an answer's end is handed to the connection, bytes still queued
/// behind it, so a large answer sent to a slow but steady client was cut off part-way.
///
/// A write of an answer's body counts when it is handed over and again when the system has taken
/// its bytes. A request whose answer is still being made (a cold run) is not idle: its deadline
/// governs it; nor is one whose body the system has taken whole so far (the server, busy, is the
/// slow side).
///
/// It also lets a body's writer wait until the system has taken what it wrote (`whenTaken`): a
/// write through Hummingbird returns once the write is queued for the connection's event loop,
/// and with that loop behind, a whole body could be queued, counted as sent, and its end
/// written; closing the connection then, as a drain does, would drop what was still queued.
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
    /// Writes of an answer's body handed over whose bytes the system has not taken yet.
    private var bodyWritesOutstanding = 0
    /// Waiting for `bodyWritesOutstanding` to be 0 (`whenTaken`).
    private var waitingForTaken: [EventLoopPromise<Void>] = []
    /// Why a write of a body failed, which fails every wait from then on: the connection is gone.
    private var writeFailure: (any Error)?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        failWaiting(ChannelError.ioOnClosedChannel)
    }

    /// Completes `promise` once the system has taken every write of a body handed over so far (at
    /// once when it has), or fails it when one of them failed: the connection closed first.
    func whenTaken(_ promise: EventLoopPromise<Void>) {
        if let writeFailure {
            promise.fail(writeFailure)
        } else if bodyWritesOutstanding == 0 {
            promise.succeed()
        } else {
            waitingForTaken.append(promise)
        }
    }

    private func failWaiting(_ error: any Error) {
        writeFailure = writeFailure ?? error
        let waiting = waitingForTaken
        waitingForTaken = []
        for promise in waiting { promise.fail(error) }
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
        case .body:
            bodyWritesOutstanding += 1
            let taken = promise ?? context.eventLoop.makePromise()
            taken.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { result in
                self.lastActivity = .now()
                self.bodyWritesOutstanding -= 1
                if case .failure(let error) = result {
                    self.failWaiting(error)
                } else if self.bodyWritesOutstanding == 0 {
                    let waiting = self.waitingForTaken
                    self.waitingForTaken = []
                    for promise in waiting { promise.succeed() }
                }
            }
            context.write(data, promise: taken)
            return
        case .end:
            unanswered = max(0, unanswered - 1)
            sendingAnswer = false
        case .head: break
        }
        context.write(data, promise: promise)
    }

    /// The most bytes written to a connection that the system holds before sending them
    /// (`TCP_NOTSENT_LOWAT`). The system would otherwise take megabytes of a large answer ahead
    /// of a slow client and ask for more only once about half of them had gone, which at some tens
    /// of kilobytes a second takes past the idle timeout: such a client, taking bytes all along,
    /// was cut off as idle. Bytes sent and not yet acknowledged are not limited, so a fast
    /// client far away is not slowed.
    static let unsentBytes = 128 << 10

    private func start(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let unsent = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_NOTSENT_LOWAT))
        try? context.channel.syncOptions?.setOption(unsent, value: SocketOptionValue(Self.unsentBytes))
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
            let clientStalled = self.sendingAnswer && self.bodyWritesOutstanding > 0
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

extension Channel {
    /// Returns once the system has taken every write of an answer's body handed to this
    /// connection so far (`IdleConnectionCloser.whenTaken`); throws when the connection closed
    /// first, or when the task is cancelled (past the drain timeout).
    func bodyTaken() async throws {
        let taken = eventLoop.makePromise(of: Void.self)
        try await withTaskCancellationHandler {
            // After the writes handed over before the call: the loop runs its tasks in order.
            eventLoop.execute {
                do {
                    try self.pipeline.syncOperations.handler(type: IdleConnectionCloser.self).whenTaken(taken)
                } catch {
                    taken.fail(error)
                }
            }
            try await taken.futureResult.get()
        } onCancel: {
            taken.fail(CancellationError())
        }
    }
}
#endif
