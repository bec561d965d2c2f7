#if Server
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Counts and logs a request the HTTP parser refused (a target that is not a path, headers past
/// their limit, bytes that are not HTTP/1): Hummingbird answers it 400 and closes the connection
/// before any route or middleware sees it, so without this an operator would find it in
/// neither the access log nor `/metrics`.
final class UnreadableRequestReporter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let metrics: ServerMetrics
    private let logger: Logger

    init(metrics: ServerMetrics, logger: Logger) {
        self.metrics = metrics
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError {
            // A client that ended the connection mid-request has most likely left, and gets
            // nothing: no refusal to count.
            let left = error == .invalidEOFState
            if !left { metrics.refusedUnread() }
            logger.info(
                "request",
                metadata: [
                    "method": "-", "path": "-", "status": "\(left ? "-" : "400")", "source": "-", "bytes": "0",
                    "reason": "\(Self.reason(error))",
                ])
        }
        context.fireErrorCaught(error)
    }

    /// Why the parser refused a request, as the access log says it.
    static func reason(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidEOFState: "unreadable: the connection closed before the request's end"
        // The parser says the same of too many headers as of too many bytes of them.
        case .headerOverflow:
            "unreadable: its headers are over \(PipelineServer.maxHeaderBytes / 1024) KiB, or more than \(PipelineServer.maxHeaderCount) of them"
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort:
            "unreadable: its target is not a path (/{output}/{input})"
        default: "unreadable: not an HTTP/1 request (\(error))"
        }
    }
}
#endif
