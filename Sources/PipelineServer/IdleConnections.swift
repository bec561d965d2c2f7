#if Server
import NIOCore
import NIOHTTPTypes

/// Closes a connection that has done nothing for the idle timeout: read no part of a request,
/// and had no answer's bytes taken by the client. It follows `IdleStateHandler`'s `.all` event,
/// which counts a write when the client has taken it, so a large answer sent to a slow but
/// steady client is never cut off part-way; Hummingbird's own idle timer counts only reads, and
/// starts again when an answer's end is handed to the connection, bytes still queued behind it.
///
/// A request whose answer is still being made (a cold run) is not idle: its deadline governs it.
final class IdleConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests read whose answer's end has not been written.
    private var unanswered = 0
    /// Whether a request's head has come and its end not yet.
    private var readingRequest = false
    /// Whether an answer's head has been written and its end not yet.
    private var sendingAnswer = false

    /// The handlers that keep `timeout`: the timer, then this.
    static func handlers(timeout: TimeAmount) -> [any RemovableChannelHandler] {
        [IdleStateHandler(allTimeout: timeout), IdleConnectionCloser()]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational: sendingAnswer = true
        case .end:
            unanswered = max(0, unanswered - 1)
            sendingAnswer = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .all else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if unanswered == 0 || readingRequest || sendingAnswer { context.close(promise: nil) }
    }
}

@available(*, unavailable)
extension IdleConnectionCloser: Sendable {}
#endif
