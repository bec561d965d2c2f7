#if Server
import Foundation
import Hummingbird
import PipelineKit
import Vips

/// Answers `/info/{input}`: what an input is, as JSON, without making any output (see
/// `InputInspector`). The input is named as in `/{output}/{input}` and looked up in the catalog,
/// never joined onto the file system.
struct InfoResponder: Sendable {
    /// The first part of the path that asks for an input's info.
    static let prefix = "/info/"

    private let catalog: OutputCatalog
    private let inspector: InputInspector
    /// Whose lanes and queue reads wait in, beside the runs.
    private let maker: InputMaker
    private let definition: PipelineDefinition
    private let cacheControl: String?
    /// Seconds a request waits for its answer (`serve.timeout`).
    private let timeout: Double
    /// The bodies answered, so that an input asked for again at the same version is not decoded
    /// again for its placeholders.
    let answered = InfoBodies()

    init(pipeline: Pipeline, plan: RunPlan, catalog: OutputCatalog, maker: InputMaker) {
        self.catalog = catalog
        self.maker = maker
        inspector = InputInspector(pipeline: pipeline, plan: plan, stages: maker.stages, memory: maker.memory)
        definition = plan.definition
        cacheControl = plan.definition.serve.cacheControl
        timeout = plan.definition.serve.timeout
    }

    /// Whether `path` (below any signature) asks for an input's info.
    static func asksForInfo(_ path: String) -> Bool {
        path == "/info" || path.hasPrefix(prefix)
    }

    /// The JSON `path` (`/info/{input}`, below any signature) asks for; 304 when `If-None-Match`
    /// names its `ETag`; a refusal otherwise.
    func answer(_ request: Request, path: String) async throws(ServeError) -> Response {
        let raw = path.hasPrefix(Self.prefix) ? String(path.dropFirst(Self.prefix.count)) : ""
        guard !raw.isEmpty else { throw ServeError(404, "no such path: expected /info/{input}") }
        // Decoded once and looked up as it is: an encoded `..` or a NUL is a name no input has.
        guard let name = raw.removingPercentEncoding, let input = catalog.input(named: name) else {
            if let name = raw.removingPercentEncoding, let refused = catalog.refusal(ofInputNamed: name) {
                throw OutputResponder.refusal(for: refused.error, of: refused.listing, as: name, doing: "read")
            }
            throw ServeError(404, "no input \(raw.prefix(200)) in the pipeline file")
        }
        let listing = input.listing
        let placeholders = InputInspector.placeholders(declaredFor: listing, in: definition)
        let ifNoneMatch = request.headers[.ifNoneMatch]
        let deadline = AnswerDeadline(seconds: timeout)
        let (maker, inspector, answered) = (self.maker, self.inspector, self.answered)
        let autorotate = definition.decompress.autorotate
        let tag = { @Sendable (fetched: InputInspector.Fetched) in
            fetched.version.map { "\"\(Self.tag(version: $0, placeholders: placeholders, autorotate: autorotate))\"" }
        }
        // What needs no decode: nothing for a client whose copy is current, or the body kept.
        let known = { @Sendable (tag: String?) -> (tag: String?, body: Data?)? in
            guard let tag else { return nil }
            if OutputResponder.matches(ifNoneMatch, tag) { return (tag, nil) }
            return answered.body(tagged: tag).map { (tag, $0) }
        }
        let outcome = await deadline.bound { () -> Result<(tag: String?, body: Data?), any Error> in
            do {
                // A local input's version is known at once, without a lane: an answer that needs
                // no decode does not wait behind the runs, nor is it refused when they fill the queue.
                let local = listing.isRemote ? nil : try await inspector.fetch(listing)
                if let local, let answer = known(tag(local)) { return .success(answer) }
                // Read on a lane, as a run is made: the file's `inFlight` and `serve.maxQueue` bound both.
                return .success(
                    try await maker.inspection {
                        let fetched: InputInspector.Fetched
                        if let local { fetched = local } else { fetched = try await inspector.fetch(listing) }
                        let version = tag(fetched)
                        if let answer = known(version) { return answer }
                        let body = try Self.body(of: try await inspector.info(of: fetched, placeholders: placeholders))
                        if let version { answered.keep(body, tagged: version) }
                        return (version, body)
                    })
            } catch {
                return .failure(error)
            }
        }
        // Cancelled, the wait ended early: the server is stopping past its drain timeout.
        if Task.isCancelled { throw OutputResponder.stopping }
        let read: (tag: String?, body: Data?)
        switch outcome {
        case nil:
            throw deadline.refusal
        case .success(let answer):
            read = answer
        case .failure(let error) where error is InputMaker.Full:
            throw OutputResponder.busy
        case .failure(let error):
            throw Self.refusal(for: error, of: listing, as: name)
        }
        var headers: HTTPFields = [.contentType: "application/json"]
        if let cacheControl { headers[.cacheControl] = cacheControl }
        if let tag = read.tag { headers[.eTag] = tag }
        guard let body = read.body else { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The JSON of `info`.
    private static func body(of info: InputInfo) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(InfoBody(info))
    }

    /// The `ETag` of the info of an input at `version`: what it says changes with the input's
    /// bytes, the placeholders asked for and their settings, whether the size is turned upright,
    /// and the code that reads them.
    static func tag(version: String, placeholders: [PlaceholderKind: PlaceholderSettings], autorotate: Bool) -> String {
        let kinds = placeholders.sorted { $0.key.rawValue < $1.key.rawValue }.map { kind, settings in
            "\(kind.rawValue):\(settings.lqipWidth),\(settings.lqipQuality),\(settings.blurhashXComponents),\(settings.blurhashYComponents)"
        }
        let described = ["info", PipelineKitInfo.version, version, "autorotate=\(autorotate)"] + kinds
        return "info-" + SHA256.hex(Data(described.joined(separator: "\n").utf8)).prefix(40)
    }

    /// The refusal for an input that could not be fetched or read: what the output route
    /// answers the same failure (`OutputResponder.refusal`).
    static func refusal(for error: any Error, of input: InputFile, as name: String) -> ServeError {
        guard let failure = error as? ItemError else {
            if error is CancellationError { return OutputResponder.stopping }
            return ServeError(500, "the server could not read \(name)")
        }
        return OutputResponder.refusal(for: failure, of: input, as: name, doing: "read")
    }
}

/// The bodies `/info` answered, by their `ETag` (which changes with the input's version and
/// with what the body says), so that an input asked for again is answered without a decode. At
/// most `capacity` are kept, each a few hundred bytes; the oldest go first.
final class InfoBodies: Sendable {
    static let capacity = 4096

    private struct State {
        var bodies: [String: Data] = [:]
        /// The tags in the order they were kept.
        var order: [String] = []
        var kept = 0
    }

    private let state = Locked(State())

    /// The bodies kept so far, for tests to tell a body made from one kept.
    var kept: Int { state.withLock { $0.kept } }

    /// The body kept under `tag`, or nil.
    func body(tagged tag: String) -> Data? {
        state.withLock { $0.bodies[tag] }
    }

    /// Keeps `body` under `tag`, letting the oldest go past `capacity`.
    func keep(_ body: Data, tagged tag: String) {
        state.withLock { state in
            guard state.bodies.updateValue(body, forKey: tag) == nil else { return }
            state.kept += 1
            state.order.append(tag)
            if state.order.count > Self.capacity { state.bodies[state.order.removeFirst()] = nil }
        }
    }
}

/// The JSON of `/info/{input}`: the facts, and the placeholders asked for beside them (those
/// not asked for left out).
private struct InfoBody: Encodable {
    let width: Int
    let height: Int
    let format: String
    let hasAlpha: Bool
    let orientation: Int
    let lqip: String?
    let blurhash: String?
    let thumbhash: String?
    let dominantColor: String?
    let transparent: Bool?

    init(_ info: InputInfo) {
        width = info.width
        height = info.height
        format = info.format
        hasAlpha = info.hasAlpha
        orientation = info.orientation
        lqip = info.placeholders?.lqip
        blurhash = info.placeholders?.blurhash
        thumbhash = info.placeholders?.thumbhash
        dominantColor = info.placeholders?.dominantColor
        transparent = info.placeholders?.transparent
    }
}
#endif
