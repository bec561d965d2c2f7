#if Server
import Foundation
import Hummingbird
import NIOCore
import Logging
import PipelineKit
import Vips

/// Counts every request in the server's metrics and logs it (the access log, a line a request at
/// `info`), and renders every refusal as the JSON answer it is: the outermost middleware, so
/// that what the others refuse is counted and logged too.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    let metrics: ServerMetrics
    let catalog: OutputCatalog
    /// Whether paths start with a signature, which is not an output's name.
    let signed: Bool
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        metrics.started()
        var response: Response
        // Why a request was refused, for its line of the access log: what its body says, which
        // names no path on the server and no secret.
        var refusal: String?
        do {
            response = try await next(request, context)
        } catch let error as ServeError {
            if let cause = error.cause {
                logger.error("request failed", metadata: ["path": "\(loggedPath(request.uri.path))", "error": "\(cause)"])
            }
            refusal = error.reason
            response = error.response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            // The router's own refusals: a path no route takes.
            let reason = error.status == .notFound ? "no such path: expected /{output}/{input}" : error.status.reasonPhrase
            response = ServeError.body(error.status, reason)
        } catch {
            logger.error("request failed", metadata: ["path": "\(loggedPath(request.uri.path))", "error": "\(error)"])
            response = ServeError.body(.internalServerError, "the server could not answer")
        }
        // A browser takes every answer as the type it names, never guessing another from its bytes.
        response.headers[.xContentTypeOptions] = "nosniff"
        // Past the drain timeout the connections are closed: an answer made now is never sent.
        let sent = metrics.requestsCutOff == nil
        // An answer to HEAD or CONNECT has no body, whatever it says of one.
        let length = request.method == .head || request.method == .connect || !sent ? 0 : Int(response.headers[.contentLength] ?? "") ?? 0
        let duration = start.duration(to: .now)
        let output = outputName(in: signed ? Self.droppingFirstPart(request.uri.path) : request.uri.path)
        metrics.finished(
            output: output, status: response.status.code, duration: duration, source: response.headers[OutputResponder.sourceHeader])
        // The access log's line, but for its bytes: made only when it is logged.
        var metadata: Logger.Metadata?
        if logger.logLevel <= .info {
            var line: Logger.Metadata = [
                "method": "\(request.method)", "path": "\(loggedPath(request.uri.path))",
                "status": "\(sent ? String(response.status.code) : "-")",
                "source": "\(response.headers[OutputResponder.sourceHeader] ?? "-")",
            ]
            if let refusal { line["reason"] = "\(refusal)" }
            if !sent { line["reason"] = "not sent: the server stopped draining before it could answer" }
            metadata = line
        }
        // Every body counts, a refusal's JSON too, as a web server's access log counts them: the
        // bytes the connection took, known once a body of several pieces is written (or cut
        // off); a body of one piece is handed to the connection whole, in one write.
        let (metrics, logger, line) = (self.metrics, self.logger, metadata)
        let report: @Sendable (Int, String?) -> Void = { handed, cause in
            metrics.sent(output: output, bytes: handed)
            guard var metadata = line else { return }
            // Until the body is taken (or cut off): a slow client's download is its request's time.
            let (seconds, attoseconds) = start.duration(to: .now).components
            metadata["ms"] = "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)"
            metadata["bytes"] = "\(handed)"
            if handed < length {
                // The server's own cut, past its drain timeout, is told from a client's leaving
                // (or taking nothing for the idle timeout), which an operator acts on otherwise.
                let why =
                    cause
                    ?? (metrics.requestsCutOff != nil
                        ? "the server stopped and closed the connection"
                        : "the connection closed (the client left, or took nothing for the idle timeout)")
                metadata["reason"] = "cut off after \(handed) of \(length) bytes: \(why)"
            }
            logger.info("request", metadata: metadata)
        }
        if length > ResponseBody.pieceBytes {
            metrics.bodyStarted()
            response.body = SentBody { handed, cause in
                metrics.bodyEnded()
                report(handed, cause)
            }
            .counting(response.body, on: context.channel)
        } else {
            report(length, nil)
        }
        if request.method == .head { response = response.createHeadResponse() }
        return response
    }

    /// `path` as logs show it: when paths are signed, with each part that may hold a signature
    /// (`URLSignature.mayHoldSignature`) replaced by `_`, wherever it stands and however it is
    /// spelled, so that no log level prints one, which would let anyone who reads it ask for the
    /// file; an unsigned request's output and input stay, for whoever reads why it was refused.
    func loggedPath(_ path: String) -> String {
        Self.loggedPath(path, signed: signed)
    }

    /// `path` without its first part (a signature), from the `/` after it.
    static func droppingFirstPart(_ path: String) -> String {
        let raw = path.dropFirst()
        return raw.firstIndex(of: "/").map { String(raw[$0...]) } ?? "/"
    }

    static func loggedPath(_ path: String, signed: Bool) -> String {
        guard signed else { return path }
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // A signature in standard base64 holds `/`, and so spans the first parts, one of which
        // may be long enough to look like one alone: the most first parts that together may
        // hold one, and are no longer than one so spelled, are one `_`.
        if parts.count > 2 {
            var joined = String(parts[1])
            var last: Int?
            for end in 2..<parts.count {
                joined += "/" + parts[end]
                guard (joined.percentDecoded ?? joined).count <= URLSignature.longestSlashedSpelling else { break }
                if URLSignature.mayHoldSignature(joined[...], mixed: true) { last = end }
            }
            if let last { parts.replaceSubrange(1...last, with: ["_"]) }
        }
        // The first part is where the signature goes: any long run of base64 there is taken for
        // one; further on, only one that looks random, as names of words stand there.
        return parts.enumerated()
            .map { index, part in URLSignature.mayHoldSignature(part, mixed: index > 1) ? "_" : String(part) }
            .joined(separator: "/")
    }

    /// The output a path names, when it names one of the file's, or `info` for the info route,
    /// a name no output may have (for the metrics' labels).
    private func outputName(in path: String) -> String? {
        if InfoResponder.asksForInfo(path) { return "info" }
        let first = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first
        return first.flatMap { $0.percentDecoded }.flatMap { catalog.outputs[$0]?.name }
    }
}

/// The bytes of one answer's body its connection took, reported once: when the body has been
/// written or its writing failed (the client went away, or was idle too long), or, when the
/// connection closed before the body was begun, as the answer is dropped.
final class SentBody: Sendable {
    private let state = Locked((bytes: 0, reported: false, cause: String?.none))
    private let report: @Sendable (Int, String?) -> Void

    /// Reports the bytes taken to `report`, once, with why the server cut the body short when
    /// it did so itself (its file changed while it was sent, or its object in a bucket did).
    init(report: @escaping @Sendable (Int, String?) -> Void) {
        self.report = report
    }

    deinit { finish() }

    /// `body`, counting what `connection` takes of it, and reporting when it ends.
    func counting(_ body: ResponseBody, on connection: any Channel) -> ResponseBody {
        ResponseBody(contentLength: body.contentLength) { writer in
            defer { self.finish() }
            do {
                try await body.write(CountingBodyWriter(base: writer, sent: self, connection: connection))
            } catch let changed as OpenedFile.Changed {
                self.state.withLock { $0.cause = "its file was written to in place while it was sent" }
                throw changed
            } catch let unread as StoredOutputs.Failure {
                self.state.withLock { $0.cause = "its object could not be read to its end: \(unread.description)" }
                throw unread
            }
        }
    }

    /// Notes `count` more bytes taken.
    func add(_ count: Int) { state.withLock { $0.bytes += count } }

    /// Reports the bytes taken, the first time only.
    func finish() {
        let taken = state.withLock { state -> (bytes: Int, cause: String?)? in
            guard !state.reported else { return nil }
            state.reported = true
            return (state.bytes, state.cause)
        }
        if let taken { report(taken.bytes, taken.cause) }
    }
}

/// A body writer that counts the bytes its connection took (`SentBody`): a write returns once
/// the system has taken its bytes, so that the body's end is written only then, and a drain
/// that closes the connection after it drops nothing.
private struct CountingBodyWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let sent: SentBody
    let connection: any Channel

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await base.write(buffer)
        try await connection.bodyTaken()
        sent.add(buffer.readableBytes)
    }

    mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
        for buffer in buffers { try await write(buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}

/// Refuses a request line no route answers, whatever the path: a method but `GET` and `HEAD`
/// (405 with `Allow`), a `Host` HTTP does not allow (400, `HostHeader`), and a target past
/// `PipelineServer.maxTargetBytes` (414). Inside the access middleware, so that each is counted
/// and logged.
struct RequestLineMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            throw ServeError(405, "only GET and HEAD are answered", headers: [.allow: "GET, HEAD"])
        }
        if let name = HTTPFields.Element.Name(HostHeader.faultField), let fault = request.headers[name] {
            throw ServeError(400, "the request has \(fault)")
        }
        guard request.uri.string.utf8.count <= PipelineServer.maxTargetBytes else {
            throw ServeError(414, "the URL is longer than \(PipelineServer.maxTargetBytes) bytes")
        }
        return try await next(request, context)
    }
}

/// Checks the signature a signed path starts with before anything is looked up or made (403
/// when it is missing or wrong, or when the URL's signed `expires` is past), and hands the
/// routes the path below it. The answer to a URL that expires may be cached until then, and no
/// longer.
struct SignatureMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    let signature: URLSignature

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let expiries = URLSignature.expiries(inQuery: request.uri.query ?? "")
        guard expiries.count <= 1 else { throw ServeError(403, "the URL has more than one expires") }
        guard let rest = signature.verified(request.uri.path, expires: expiries.first) else {
            throw ServeError(403, "the URL's signature is missing or wrong")
        }
        var secondsLeft: Int?
        if let expires = expiries.first {
            // Digits only: the time signed is the time checked, with no sign or spaces to read past.
            guard expires.allSatisfy({ $0.isASCII && $0.isNumber }), let seconds = Int(expires) else {
                throw ServeError(403, "expires is not a Unix time in seconds")
            }
            let now = Date().timeIntervalSince1970
            guard Double(seconds) > now else { throw ServeError(403, "the URL expired") }
            secondsLeft = seconds - Int(now.rounded(.up))
        }
        var context = context
        context.unsignedPath = rest
        var response = try await next(request, context)
        if let secondsLeft {
            // A year at most, as for files named by their hash: a URL signed to expire centuries
            // away is kept no longer, and no cache meets a `max-age` past the 2³¹ seconds RFC
            // 9111 asks it to read.
            let lifetime = min(max(0, secondsLeft), OutputResponder.aYear)
            response.headers[.cacheControl] = Self.cacheControl(response.headers[.cacheControl], until: lifetime)
        }
        return response
    }

    /// `cacheControl` with every lifetime (`max-age`, `s-maxage`) at most `seconds`, without
    /// `immutable` or the stale answers a cache may give past a lifetime (`stale-while-revalidate`,
    /// `stale-if-error`), and with `must-revalidate` when it gives a lifetime: a cache must not
    /// answer a URL after it expires, as the server would not. Without a `max-age` (and
    /// neither `no-store` nor `no-cache`, which send every use to the server), the lifetime is
    /// the time left, so that no cache gives the answer a lifetime of its own choosing.
    static func cacheControl(_ cacheControl: String?, until seconds: Int) -> String {
        guard let cacheControl else { return "max-age=\(seconds), must-revalidate" }
        let dropped: Set = ["", "immutable", "stale-while-revalidate", "stale-if-error"]
        var directives: [String] = []
        var names: Set<String> = []
        for item in cacheControl.split(separator: ",") {
            let directive = item.trimmingCharacters(in: .whitespaces)
            let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let name = parts[0].lowercased()
            guard !dropped.contains(name) else { continue }
            names.insert(name)
            let isLifetime = (name == "max-age" || name == "s-maxage") && parts.count == 2
            directives.append(isLifetime ? "\(parts[0])=\(min(Int(parts[1]) ?? 0, seconds))" : directive)
        }
        if names.isDisjoint(with: ["max-age", "no-store", "no-cache"]) {
            directives.append("max-age=\(seconds)")
            names.insert("max-age")
        }
        if !names.isDisjoint(with: ["max-age", "s-maxage"]), !names.contains("must-revalidate") { directives.append("must-revalidate") }
        return directives.joined(separator: ", ")
    }
}
#endif
