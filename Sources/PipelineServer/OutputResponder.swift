#if Server
import Foundation
import Hummingbird
import Logging
import PipelineKit

/// Answers one request: `/healthz`, or a file of an output of an input (see `PipelineServer`).
struct OutputResponder: Sendable {
    private let catalog: OutputCatalog
    let maker: InputMaker
    private let cacheControl: String?
    private let logger: Logger
    private let files = FileIO()
    private let metrics: ServerMetrics
    /// Checks the signature every output's path starts with, when the file's `serve` section signs URLs.
    private let signature: URLSignature?

    /// Says where an answered file came from: `disk` when a run (a batch run, or an earlier
    /// request) had made it and it was up to date, `made` when this request's run made it.
    // `HTTPFields.Element` is swift-http-types' `HTTPField`, reached through what Hummingbird exports.
    static let sourceHeader = HTTPFields.Element.Name("X-Pipeline-Source")!

    init(pipeline: Pipeline, plan: RunPlan, memory: SharedMemoryBudget, metrics: ServerMetrics, logger: Logger) {
        catalog = OutputCatalog(plan: plan)
        self.metrics = metrics
        maker = InputMaker(
            pipeline: pipeline, plan: plan, memory: memory, lanes: plan.definition.inFlight, queueLimit: plan.definition.serve.maxQueue)
        cacheControl = plan.definition.serve.cacheControl
        signature = plan.definition.serve.signing.map(URLSignature.init)
        self.logger = logger
    }

    func respond(to request: Request, context: BasicRequestContext) async -> Response {
        let start = ContinuousClock.now
        metrics.started()
        var response = await answer(request, context: context)
        let bytes = request.method == .head || response.status != .ok ? 0 : Int(response.headers[.contentLength] ?? "") ?? 0
        let duration = start.duration(to: .now)
        metrics.finished(
            output: outputName(in: signature.map { _ in Self.droppingFirstPart(request.uri.path) } ?? request.uri.path),
            status: response.status.code, duration: duration, bytes: bytes, source: response.headers[Self.sourceHeader])
        // The access log: a line a request, at `info`.
        if logger.logLevel <= .info {
            let (seconds, attoseconds) = duration.components
            logger.info(
                "request",
                metadata: [
                    "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                    "bytes": "\(bytes)", "ms": "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)",
                    "source": "\(response.headers[Self.sourceHeader] ?? "-")",
                ])
        }
        if request.method == .head { response = response.createHeadResponse() }
        return response
    }

    private func answer(_ request: Request, context: BasicRequestContext) async -> Response {
        guard request.method == .get || request.method == .head else {
            var response = Self.error(405, "only GET and HEAD are answered")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        if request.uri.path == "/metrics" {
            let text = metrics.text(runs: await maker.counts)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        if request.uri.path == "/healthz" {
            return Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        var path = request.uri.path
        if let signature {
            guard let rest = signature.verified(path) else { return Self.error(403, "the URL's signature is missing or wrong") }
            path = rest
        }
        let wanted: OutputRequest
        do {
            wanted = try OutputRequest(
                path: path, query: request.uri.queryParameters.map { (String($0.key), String($0.value)) },
                accept: request.headers[.accept], catalog: catalog)
        } catch {
            return Self.error(error.status, error.reason)
        }
        guard let input = catalog.inputs[wanted.input] else { return Self.error(404, "no input of that name") }
        // The warm path: the file the last run over this input reported, while the input and
        // the file are as that run left them, is what a run would find up to date now.
        if let warm = await maker.warmReport(for: input), case .success(let written) = Self.file(for: wanted, in: warm.report),
            warm.isCurrent(written, inputPath: input.listing.path)
        {
            return await fileResponse(WarmReport.foundOnDisk(written), for: wanted, request: request, context: context)
        }
        let made: ItemReport?
        do {
            made = try await maker.report(for: input)
        } catch {
            var response = Self.error(503, "every lane is busy and the queue is full; try again")
            response.headers[.retryAfter] = "1"
            return response
        }
        guard let report = made else { return Self.error(503, "the server is stopping") }
        switch Self.file(for: wanted, in: report) {
        case .failure(let refusal):
            return Self.error(refusal.status, refusal.reason)
        case .success(let written):
            return await fileResponse(written, for: wanted, request: request, context: context)
        }
    }

    /// `path` without its first part (a signature), from the `/` after it.
    private static func droppingFirstPart(_ path: String) -> String {
        let raw = path.dropFirst()
        return raw.firstIndex(of: "/").map { String(raw[$0...]) } ?? "/"
    }

    /// The output a path names, when it names one of the file's (for the metrics' labels).
    private func outputName(in path: String) -> String? {
        let first = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first
        return first.flatMap { String($0).removingPercentEncoding }.flatMap { catalog.outputs[$0]?.name }
    }

    /// The file to answer with, from the report of a run over the input: the one of the asked
    /// format and width; for a width above the image's own, the file that stands in for it (the
    /// widest made, as a run makes no larger one); without a width, the widest.
    static func file(for wanted: OutputRequest, in report: ItemReport) -> Result<WrittenOutput, OutputRequest.Refusal> {
        // Art direction crops are for <source media> in pages, not for a width asked for by URL.
        let candidates = report.written.filter {
            $0.output == wanted.output && $0.art == nil && ($0.format == nil || $0.format == wanted.format)
        }
        let chosen: WrittenOutput?
        if let width = wanted.width {
            chosen =
                candidates.first { $0.size.width == width }
                ?? candidates.min { abs($0.size.width - width) < abs($1.size.width - width) }
        } else {
            chosen = candidates.max { $0.size.width < $1.size.width }
        }
        if let chosen { return .success(chosen) }
        let failure =
            report.failures.first { $0.output == wanted.output } ?? report.failures.first { $0.output == nil }
            ?? report.failures.first
        guard let failure else {
            return .failure(.init(status: 404, reason: "output \(wanted.output) is not made for input \(wanted.input)"))
        }
        return .failure(.init(status: status(for: failure.error.kind), reason: "\(failure.stage): \(failure.reason)"))
    }

    /// The status for an input a run refused or could not make: 413 past a size limit, 422 for
    /// what cannot be read as an image or made from it, 502 for a remote input that could not be
    /// fetched, 500 only for what the server itself could not do (write its files).
    static func status(for kind: ItemError.Kind) -> Int {
        switch kind {
        case .tooLarge, .tooManyPixels, .overMemoryBudget: 413
        case .refused, .unreadable, .unsupportedFormat, .undecodable, .timedOut, .processing, .encoding: 422
        case .network, .httpStatus: 502
        default: 500
        }
    }

    private func fileResponse(_ written: WrittenOutput, for wanted: OutputRequest, request: Request, context: BasicRequestContext) async
        -> Response
    {
        var headers: HTTPFields = [:]
        headers[.contentType] = (written.format ?? wanted.format).mimeType
        if wanted.variesByAccept { headers[.vary] = "Accept" }
        if let cacheControl { headers[.cacheControl] = cacheControl }
        headers[Self.sourceHeader] = written.upToDate ? "disk" : "made"
        if let fingerprint = written.fingerprint {
            let tag = "\"\(fingerprint)\""
            headers[.eTag] = tag
            if Self.matches(request.headers[.ifNoneMatch], tag) { return Response(status: .notModified, headers: headers) }
        }
        do {
            let body = try await files.loadFile(path: written.path, context: context)
            return Response(status: .ok, headers: headers, body: body)
        } catch {
            // Replaced or removed between the run and the read: another request will find it again.
            var response = Self.error(503, "the file changed while it was being answered; try again")
            response.headers[.retryAfter] = "1"
            return response
        }
    }

    /// Whether an `If-None-Match` header names `tag` (or is `*`); weak tags compare as strong
    /// ones do here, as GET may (RFC 9110, section 13.1.2).
    static func matches(_ header: String?, _ tag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { entry in
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == tag || trimmed == "W/" + tag
        }
    }

    /// An error answer: `status` with a JSON body `{"error": reason}`.
    static func error(_ status: Int, _ reason: String) -> Response {
        let body = (try? JSONEncoder().encode(["error": reason])) ?? Data(#"{"error": "unknown"}"#.utf8)
        return Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
#endif
