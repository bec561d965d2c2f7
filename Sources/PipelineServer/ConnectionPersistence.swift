#if Server
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Keeps or ends a connection after each answer by HTTP/1's rules (RFC 9112, section 9.3): an
/// HTTP/1.0 request keeps it only with `Connection: keep-alive`, any request ends it with a
/// `close` among its `Connection` tokens.
///
/// Hummingbird sees requests without their version, and ends a connection only on a
/// `Connection` of exactly `close`, so an HTTP/1.0 client that reads its answer to the end of
/// the connection (ApacheBench, health checks, old proxies) waited for the idle timeout. The
/// request is handed on with `Connection: close` when it asks for the end, and its answer says
/// which it is; an HTTP/1.0 client told `keep-alive` may send the next request.
///
/// An answer written while its request's body is still coming ends the connection: the server
/// reads no body, and a client that sends one a byte at a time would otherwise hold its
/// connection, each byte counting as activity, for as long as it liked.
///
/// Once the server stops (drains), each answer still to be written says `Connection: close`:
/// the connection ends after it, and a client (a proxy keeping connections to its upstreams)
/// told so sends its next request on another, where one not told would send it on this one
/// and get no answer.
final class ConnectionPersistence: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What each answer still to be written says of the connection (`close`, `keep-alive`, or
    /// nothing for an HTTP/1.1 request that keeps it), in the order the requests came.
    private var answers: [String?] = []
    /// Whether a request's head has come and its end not yet.
    private var readingRequest = false
    /// Whether the connection ends once the answer being written has been sent.
    private var closesAfterAnswer = false
    /// Whether the server is stopping: it ends the connection after the answers in flight.
    private var stopping = false

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { stopping = true }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            if case .end = unwrapInboundIn(data) { readingRequest = false }
            context.fireChannelRead(data)
            return
        }
        readingRequest = true
        head.headers.remove(name: HostHeader.faultField)
        if let fault = HostHeader.fault(of: head) { head.headers.add(name: HostHeader.faultField, value: fault) }
        // CONNECT asks for a tunnel, which is refused: its answer has no body by HTTP's rules
        // (NIO sends none), so only the connection's end can tell the client it is whole.
        if !head.isKeepAlive || head.method == .CONNECT {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            answers.append("close")
        } else {
            answers.append(head.version.minor == 0 && head.version.major == 1 ? "keep-alive" : nil)
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), closesAfterAnswer {
            let sent = promise ?? context.eventLoop.makePromise()
            sent.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in context.close(promise: nil) }
            context.write(data, promise: sent)
            return
        }
        guard case .head(var head) = unwrapOutboundIn(data), head.status.code >= 200 else {
            context.write(data, promise: promise)
            return
        }
        if !answers.isEmpty, let connection = answers.removeFirst() {
            head.headers.replaceOrAdd(name: "connection", value: connection)
        }
        if readingRequest {
            closesAfterAnswer = true
            head.headers.replaceOrAdd(name: "connection", value: "close")
        } else if stopping {
            head.headers.replaceOrAdd(name: "connection", value: "close")
        }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}

/// Puts a `ConnectionPersistence` where it sees HTTP/1's requests, before Hummingbird's
/// conversion to version-free ones, from the handlers Hummingbird adds after it, and goes.
final class ConnectionPersistenceInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    func handlerAdded(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        if let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) {
            try? pipeline.addHandler(ConnectionPersistence(), position: .before(codec))
        }
        pipeline.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension ConnectionPersistence: Sendable {}

@available(*, unavailable)
extension ConnectionPersistenceInstaller: Sendable {}
#endif
