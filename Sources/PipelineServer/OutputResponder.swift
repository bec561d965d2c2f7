#if Server
import Foundation
import Hummingbird
import Logging
import PipelineKit

/// Answers a request for a file of an output of an input (see `PipelineServer` and `ServerRoutes`).
struct OutputResponder: Sendable {
    let catalog: OutputCatalog
    let maker: InputMaker
    private let cacheControl: String?
    /// Reads back files of outputs written to an object store.
    let stored: StoredOutputs
    /// The small files answered, kept in memory while they are the versions read.
    let bodies = WarmBodies()
    /// The image answered in place of an input that cannot be read or made (`serve.fallback`).
    private let fallback: FallbackImage?
    /// Whether answers ask for client hints, and a request's width hint picks its width (`serve.clientHints`).
    private let clientHints: Bool
    /// Whether a request makes every output of its input, not only the file it names (`serve.makeAll`).
    private let makeAll: Bool
    /// Seconds a request waits for its file (`serve.timeout`).
    let timeout: Double
    /// The width hints read, in order: the standard one first, then the one browsers sent before it.
    static let widthHints = [HTTPFields.Element.Name("Sec-CH-Width")!, HTTPFields.Element.Name("Width")!]
    /// What `Accept-CH` asks for, when the file's `serve.clientHints` is on.
    static let acceptCH = HTTPFields.Element.Name("Accept-CH")!
    /// The hints `Accept-CH` asks for.
    static let askedHints = "Sec-CH-Width, Sec-CH-DPR, Width, DPR"

    /// Says where an answered file came from: `disk` when a run (a batch run, or an earlier
    /// request) had made it and it was up to date, `store` when it was found up to date in the
    /// object store its output is written to (made by any machine sharing the bucket), `made`
    /// when this request's run made it.
    // `HTTPFields.Element` is swift-http-types' `HTTPField`, reached through what Hummingbird exports.
    static let sourceHeader = HTTPFields.Element.Name("X-Pipeline-Source")!

    init(pipeline: Pipeline, plan: RunPlan, memory: SharedMemoryBudget, turns: RunTurns, logger: Logger) {
        catalog = OutputCatalog(plan: plan)
        stored = StoredOutputs(pipeline: pipeline)
        maker = InputMaker(pipeline: pipeline, plan: plan, memory: memory, turns: turns, logger: logger)
        cacheControl = plan.definition.serve.cacheControl
        clientHints = plan.definition.serve.clientHints
        makeAll = plan.definition.serve.makeAll
        timeout = plan.definition.serve.timeout
        fallback = plan.definition.serve.fallback.flatMap(FallbackImage.init)
    }

    /// The file `path` (`/{output}/{input}`, below any signature) names, made now if need be;
    /// the fallback image for an input that cannot be read or made, when the file has one; a
    /// refusal otherwise.
    func answer(_ request: Request, path: String, context: some RequestContext) async throws(ServeError) -> Response {
        let wanted = try OutputRequest(
            path: path, query: decodedQueryParameters(request.uri.query),
            accept: request.headers[.accept], catalog: catalog,
            hints: clientHints ? Self.widthHints.map { ($0.rawName, request.headers[$0]) } : [])
        do {
            return try await fileAnswer(request, wanted: wanted, deadline: AnswerDeadline(seconds: timeout), context: context)
        } catch {
            guard error.status.code == 422, let fallback else { throw error }
            // The client sees the fallback image alone: why it got it is for the log.
            context.logger.info("answered with the fallback image", metadata: ["path": "\(path)", "reason": "\(error.reason)"])
            // As wide as the file asked for (or a hint chose): the widest, without a width.
            var response = fallback.response(width: wanted.listedWidth.flatMap { Int($0) })
            if clientHints { response.headers[Self.acceptCH] = Self.askedHints }
            if !wanted.varyingHints.isEmpty { response.headers[.vary] = wanted.varyingHints.joined(separator: ", ") }
            return response
        }
    }

    private func fileAnswer(
        _ request: Request, wanted: OutputRequest, deadline: AnswerDeadline, context: some RequestContext
    ) async throws(ServeError) -> Response {
        guard let output = catalog.outputs[wanted.output], let input = catalog.input(named: wanted.input, for: output) else {
            throw ServeError(404, "no input of that name")
        }
        // The run makes the file asked for, and no other, unless the file says to make them all.
        let variant =
            makeAll
            ? nil
            : RunPlan.WantedFile(
                output: wanted.output, format: wanted.format, width: wanted.width, original: wanted.original, art: wanted.art)
        // The warm path: the file the last run for it reported, while the input and the file
        // are as that run left them, is what a run would find up to date now.
        if let warm = await maker.warmReport(for: input, variant: variant),
            case .success(let written) = Self.file(for: wanted, in: warm.report),
            warm.isCurrent(written, inputPath: input.listing.path)
        {
            return try await fileResponse(
                WarmReport.foundOnDisk(written), stamp: warm.stamp(of: written), for: wanted, request: request, deadline: deadline,
                context: context)
        }
        let maker = self.maker
        let made = await deadline.bound { () -> Result<ItemReport?, InputMaker.Full> in
            do throws(InputMaker.Full) {
                return .success(try await maker.report(for: input, variant: variant))
            } catch {
                return .failure(error)
            }
        }
        // Cancelled, the wait ended early: the server is stopping past its drain timeout.
        if Task.isCancelled { throw Self.stopping }
        guard let made else { throw deadline.refusal }
        guard case .success(let ended) = made else { throw Self.busy }
        guard let report = ended else { throw Self.stopping }
        // A file the run made is answered only while it is the one the run put there: another
        // process may rename its own file over it at once.
        let written = try Self.file(for: wanted, in: report).get()
        return try await fileResponse(
            written, stamp: written.committed, for: wanted, request: request, deadline: deadline, context: context)
    }

    /// The file to answer with, from the report of a run over the input: the one of the asked
    /// art crop (or of the output's own widths), format and width; for a width above the image's
    /// own, the file that stands in for it (the widest made, as a run makes no larger one); for
    /// `"original"`, the file at the image's own width; without a width, the widest. When the
    /// asked file failed, its failure: another width's file, found up to date beside it, would
    /// be answered under its own ETag at this URL.
    static func file(for wanted: OutputRequest, in report: ItemReport) -> Result<WrittenOutput, ServeError> {
        let candidates = report.written.filter {
            $0.output == wanted.output && $0.art == wanted.art && ($0.format == nil || $0.format == wanted.format)
        }
        if let width = wanted.width, let exact = candidates.first(where: { $0.size.width == width }) { return .success(exact) }
        // A run for a request makes the file it names alone (or, with `makeAll`, every one), so
        // a failure of this output's format and crop is taken as the asked file's.
        let asked = report.failures.first {
            $0.output == nil || ($0.output == wanted.output && $0.art == wanted.art && ($0.format == nil || $0.format == wanted.format))
        }
        if let asked { return .failure(refusal(for: asked.error, output: asked.output, of: report.input, as: wanted.input)) }
        let chosen: WrittenOutput?
        if let width = wanted.width {
            chosen = candidates.min { abs($0.size.width - width) < abs($1.size.width - width) }
        } else if wanted.original, let original = candidates.first(where: \.isOriginal) {
            chosen = original
        } else {
            chosen = candidates.max { $0.size.width < $1.size.width }
        }
        if let chosen { return .success(chosen) }
        guard let failure = report.failures.first(where: { $0.output == wanted.output }) ?? report.failures.first else {
            return .failure(ServeError(404, "output \(wanted.output) is not made for input \(wanted.input)"))
        }
        return .failure(refusal(for: failure.error, output: failure.output, of: report.input, as: wanted.input))
    }

    /// The answer with `written`, whose file is read only when its version is `stamp` (when
    /// known) and its size is the one reported.
    private func fileResponse(
        _ written: WrittenOutput, stamp: FileStamp?, for wanted: OutputRequest, request: Request, deadline: AnswerDeadline,
        context: some RequestContext
    ) async throws(ServeError) -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = (written.format ?? wanted.format).mimeType
        let varies = (wanted.variesByAccept ? ["Accept"] : []) + wanted.varyingHints
        if !varies.isEmpty { headers[.vary] = varies.joined(separator: ", ") }
        if clientHints { headers[Self.acceptCH] = Self.askedHints }
        if let cacheControl { headers[.cacheControl] = cacheControl }
        // A name that changes with the bytes lets a URL that names the hash be cached for good.
        if wanted.hashLength != nil { headers[.cacheControl] = wanted.hash == nil ? cacheControl ?? "no-cache" : Self.immutable }
        headers[Self.sourceHeader] = written.upToDate ? (ObjectStores.isObject(written.path) ? "store" : "disk") : "made"
        if let fingerprint = written.fingerprint {
            let tag = "\"\(fingerprint)\""
            headers[.eTag] = tag
            // A URL that names a hash is unchanged only while the bytes have it: checked first.
            // Of an output named by its hash, a 304 too says which URL names these bytes.
            if wanted.hashLength == nil, Self.matches(request.headers[.ifNoneMatch], tag) {
                return Response(status: .notModified, headers: headers)
            }
        }
        if let length = wanted.hashLength {
            return try await hashedResponse(
                written, stamp: stamp, length: length, for: wanted, request: request, headers: headers, deadline: deadline,
                context: context)
        }
        // A HEAD sends no body: an object's bytes would be read from the bucket for nothing. Its
        // version is the one the run put or found there.
        if request.method == .head, ObjectStores.isObject(written.path) {
            return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: written.byteCount) { _ in })
        }
        return Response(
            status: .ok, headers: headers, body: try await responseBody(of: written, stamp: stamp, deadline: deadline, context: context))
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
}
#endif
