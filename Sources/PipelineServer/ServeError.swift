#if Server
import Foundation
import Hummingbird
import NIOCore

/// Why a request gets no file, as Hummingbird's router and middleware carry it: the status, the
/// reason its JSON body `{"error": reason}` gives, and the headers that go with it
/// (`Retry-After`, `Allow`); for a failure of the server itself, what the error log says.
struct ServeError: HTTPResponseError, Equatable {
    let status: HTTPResponse.Status
    let reason: String
    var headers: HTTPFields
    /// The whole failure, for the operator: the access middleware logs it at `error`. The body
    /// says only which output of which input, where this may name the server's paths and bucket.
    let cause: String?

    init(_ code: Int, _ reason: String, headers: HTTPFields = [:], cause: String? = nil) {
        status = HTTPResponse.Status(code: code)
        self.reason = reason
        self.headers = headers
        self.cause = cause
    }

    /// A refusal that may be tried again shortly: 503 with `Retry-After: 1`.
    static func tryAgain(_ reason: String, cause: String? = nil) -> ServeError {
        ServeError(503, reason, headers: [.retryAfter: "1"], cause: cause)
    }

    func response(from request: Request, context: some RequestContext) -> Response {
        var response = Self.body(status, reason)
        for field in headers { response.headers.append(field) }
        return response
    }

    /// `status` with a JSON body `{"error": reason}`, which no cache keeps: a CDN would
    /// otherwise keep a 404 by its own rules, and answer it after the input was added.
    /// A reason names the input as its URL did: `sub/b.jpg`, not JSON's optional `sub\/b.jpg`.
    static func body(_ status: HTTPResponse.Status, _ reason: String) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let body = (try? encoder.encode(["error": reason])) ?? Data(#"{"error": "unknown"}"#.utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// The context of a request to the server: Hummingbird's, and the path below the signature once
/// `SignatureMiddleware` has checked it.
struct ServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The path after its signature (from the `/` after it), once checked; nil when URLs are not signed.
    var unsignedPath: String?
    /// The connection the request came on, whose answer's body waits for it to take each piece.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The path that names what is asked for: without its signature, when URLs are signed.
    func routedPath(of request: Request) -> String { unsignedPath ?? request.uri.path }
}
#endif
