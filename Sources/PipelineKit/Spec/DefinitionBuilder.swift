import Foundation

/// Turns a validated document into typed settings, and finds what the shapes alone cannot:
/// processor option combinations, duplicate output names, paths that clash or lie about format.
///
/// When the shapes had problems, it still checks every part whose shape is right (each step,
/// each output), so that one pass lists them all, and builds no definition.
///
/// Its steps live beside it: reading the sections (this file), building each output
/// (`+Outputs`), its steps and encoders (`+Steps`), checking outputs against each other
/// (`+OutputChecks`), and reading values through the declared options (`+Readers`).
struct DefinitionBuilder {
    let processors: ProcessorRegistry
    let baseDirectory: URL
    /// The JSON paths the shape validator found problems at.
    let shapeProblemPaths: [String]
    var problems: [PipelineFileError.Problem] = []
    /// What is worth saying about a file that can run.
    var warnings: [String] = []
    /// The variables a `"${NAME}"` value reads (`EnvironmentReference`).
    let environment: [String: String]
    /// Whether the file names a `focusPoints` file, which `"position": "focus"` needs.
    var hasFocusPoints = false

    init(
        processors: ProcessorRegistry, baseDirectory: URL, shapeProblems: [PipelineFileError.Problem],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.processors = processors
        self.baseDirectory = baseDirectory
        shapeProblemPaths = shapeProblems.map(\.path)
        self.environment = environment
    }

    /// Whether the shape validator found nothing wrong at `path` or inside it.
    func isWellShaped(_ path: String) -> Bool {
        !shapeProblemPaths.contains { $0 == path || $0.hasPrefix(path + ".") || $0.hasPrefix(path + "[") }
    }

    /// The definition `root` describes, or nil when it has problems (then in `problems`).
    mutating func build(_ root: JSONNode) -> PipelineDefinition? {
        hasFocusPoints = root["focusPoints"] != nil
        // "resize" is the stage's old name: still read, with a warning; given with the new one, a
        // problem said whatever else is wrong.
        let renamed = PipelineFormat.renamedKeyFindings(in: root)
        problems += renamed.problems
        guard shapeProblemPaths.isEmpty else {
            checkPartsOfMisshapenFile(root)
            return nil
        }
        do {
            let stages = try readStages(root)
            guard case .array(let outputNodes)? = root["outputs"]?.value,
                case .array(let inputNodes)? = root["inputs"]?.value
            else { return nil }
            checkInputs(inputNodes)
            let outputs = buildOutputs(outputNodes)
            let top = reader(root, PipelineFormat.topLevelOptions(processors: processors))
            var definition = PipelineDefinition(
                name: try top.string("name"),
                baseDirectory: baseDirectory,
                inputs: inputNodes.compactMap(inputEntry),
                fetch: stages.fetch,
                cache: stages.cache,
                decompress: stages.decompress,
                process: stages.process,
                encode: stages.encode,
                inFlightSetting: try top.optionalInt("inFlight"),
                incremental: try top.bool("incremental"),
                allowEmpty: try top.bool("allowEmpty"),
                caseInsensitive: try top.bool("caseInsensitive"),
                outputs: outputs,
                manifest: try readManifest(root),
                warnings: renamed.warnings + warnings,
                s3: try readS3(root)
            )
            definition.serve = try readServe(root, maxPixels: stages.decompress.maxPixels)
            definition.focusPoints = readFocusPoints(root)
            // As `inputs` keeps them, so that an index names the same entry in both.
            definition.inputLocations = inputNodes.filter { inputEntry($0) != nil }.map(\.location)
            // The manifest may be a path alone, or a section with one.
            definition.manifestLocation = (root["manifest"]?["path"] ?? root["manifest"])?.location
            definition.limits = LimitsSettings(itemTimeout: try reader(root["limits"], optionsOf: "limits").seconds("itemTimeout"))
            return definition
        } catch {
            // The shapes were checked, so this is a definition and its reader disagreeing.
            problems.append(.init(path: error.option ?? "", location: nil, message: "internal error: \(error.message)"))
            return nil
        }
    }

    /// Settings are read only from a well-shaped file; its inputs and outputs are checked anyway,
    /// so that one pass lists every problem.
    private mutating func checkPartsOfMisshapenFile(_ root: JSONNode) {
        if case .array(let inputNodes)? = root["inputs"]?.value { checkInputs(inputNodes) }
        if case .array(let outputNodes)? = root["outputs"]?.value { _ = buildOutputs(outputNodes) }
        _ = readFocusPoints(root)
    }

    /// The settings of the stage sections, each with the declared defaults for what it omits.
    private struct StageSections {
        let fetch: FetchSettings
        let cache: CacheSettings
        let decompress: DecompressSettings
        let process: StageSettings
        let encode: StageSettings
    }

    private mutating func readStages(_ root: JSONNode) throws(OptionError) -> StageSections {
        let process = reader(root["process"] ?? root["resize"], optionsOf: root["process"] == nil ? "resize" : "process")
        let encode = reader(root["encode"], optionsOf: "encode")
        return StageSections(
            fetch: try readFetch(root),
            cache: try readCache(root),
            decompress: try readDecompress(root),
            process: StageSettings(concurrency: try process.int("concurrency")),
            encode: StageSettings(concurrency: try encode.int("concurrency"))
        )
    }

    private mutating func readFetch(_ root: JSONNode) throws(OptionError) -> FetchSettings {
        let fetch = reader(root["fetch"], optionsOf: "fetch")
        let userAgent = try fetch.string("userAgent")
        checkHeaderValue(userAgent, at: "fetch.userAgent", location: root["fetch"]?["userAgent"]?.location)
        let timeouts = (whole: try fetch.seconds("timeout"), connect: try fetch.seconds("connectTimeout"))
        // A transfer cannot go without a time limit, as a decode may: a server that never
        // answers would hold its lane, and the run, for ever.
        for (name, seconds) in [("timeout", timeouts.whole), ("connectTimeout", timeouts.connect)] where seconds == 0 {
            problems.append(
                .init(
                    path: "fetch.\(name)", location: root["fetch"]?[name]?.location,
                    message: "must be more than 0: a transfer has no \"no limit\" (a server that never answers would hold the run)"))
        }
        return FetchSettings(
            concurrency: try fetch.int("concurrency"),
            maxBytes: try fetch.bytes("maxBytes"),
            timeout: timeouts.whole,
            connectTimeout: timeouts.connect,
            retries: try fetch.int("retries"),
            headers: readHeaders(root),
            userAgent: userAgent,
            maxRedirects: try fetch.int("maxRedirects"),
            staleIfError: try fetch.bool("staleIfError"),
            // fetch.redactQuery is still accepted, and means nothing: every value is hidden.
            showQuery: stringArray(root["fetch"]?["showQuery"]),
            headersOnRedirect: try fetch.bool("headersOnRedirect")
        )
    }

    private func readCache(_ root: JSONNode) throws(OptionError) -> CacheSettings {
        let cache = reader(root["cache"], optionsOf: "cache")
        return CacheSettings(
            concurrency: try cache.int("concurrency"),
            enabled: try cache.bool("enabled"),
            directory: URL(fileURLWithPath: try cache.string("directory"), relativeTo: baseDirectory).standardizedFileURL,
            maxSize: try cache.bytes("maxSize")
        )
    }

    private func readDecompress(_ root: JSONNode) throws(OptionError) -> DecompressSettings {
        let decompress = reader(root["decompress"], optionsOf: "decompress")
        return DecompressSettings(
            concurrency: try decompress.int("concurrency"),
            maxPixels: try decompress.int("maxPixels"),
            autorotate: try decompress.bool("autorotate"),
            failOn: try decompress.choice("failOn", as: DecompressSettings.FailOn.self),
            fastShrinkOnLoad: try decompress.bool("fastShrinkOnLoad"),
            timeout: try decompress.seconds("timeout"),
            animation: try decompress.choice("animation", as: DecompressSettings.Animation.self),
            allowUntrusted: Set(
                stringArray(decompress.value("allowUntrusted")).compactMap(DecompressSettings.UntrustedFormat.init(rawValue:))),
            maxFrames: try decompress.int("maxFrames")
        )
    }

    /// The `serve` section, with the defaults for what it omits.
    private mutating func readServe(_ root: JSONNode, maxPixels: Int) throws(OptionError) -> ServeSettings {
        let serve = reader(root["serve"], optionsOf: "serve")
        var signing: ServeSettings.Signing?
        let written = (key: try serve.optionalString("key"), salt: try serve.optionalString("salt"))
        let key = written.key.map { resolvingEnvironment($0, at: "serve.key", location: root["serve"]?["key"]?.location) }
        let salt = written.salt.map { resolvingEnvironment($0, at: "serve.salt", location: root["serve"]?["salt"]?.location) }
        if key != nil || salt != nil {
            // An unset variable is a problem already.
            for (name, resolved) in [("key", key), ("salt", salt)] where resolved.map({ $0 != nil }) ?? true {
                let text = resolved??.value
                guard text.flatMap(ServeSettings.Signing.bytes(hex:)) == nil else { continue }
                let source = resolved??.variable.map { " (the value of the environment variable \($0))" } ?? ""
                problems.append(
                    .init(
                        path: "serve.\(name)", location: root["serve"]?[name]?.location ?? root["serve"]?.location,
                        message: text == nil
                            ? "signed URLs need both serve.key and serve.salt"
                            : "expected hex digits, two a byte (for example \"943b421c9eb07c83\")\(source)"))
            }
            if let key = (key??.value).flatMap(ServeSettings.Signing.bytes(hex:)),
                let salt = (salt??.value).flatMap(ServeSettings.Signing.bytes(hex:))
            {
                signing = ServeSettings.Signing(key: key, salt: salt)
            }
        }
        let fallback = readFallback(
            try serve.optionalString("fallback"), location: root["serve"]?["fallback"]?.location, maxPixels: maxPixels)
        let cacheControl = try serve.optionalString("cacheControl")
        if let cacheControl { checkHeaderValue(cacheControl, at: "serve.cacheControl", location: root["serve"]?["cacheControl"]?.location) }
        let drainTimeout = try serve.seconds("drainTimeout")
        let timeout = try serve.seconds("timeout")
        func outOfRange(_ name: String, _ seconds: Double, expected: String) -> PipelineFileError.Problem {
            .init(
                path: "serve.\(name)", location: root["serve"]?[name]?.location,
                message: "\(Units.text(seconds: seconds)) is out of range: expected \(expected)")
        }
        if drainTimeout > ServeSettings.longestTimeout { problems.append(outOfRange("drainTimeout", drainTimeout, expected: "0 to 1h")) }
        if timeout == 0 || timeout > ServeSettings.longestTimeout {
            problems.append(outOfRange("timeout", timeout, expected: "more than 0 to 1h"))
        }
        return ServeSettings(
            cacheControl: cacheControl, maxConnections: try serve.int("maxConnections"),
            maxQueue: try serve.int("maxQueue"), signing: signing, clientHints: try serve.bool("clientHints"), fallback: fallback,
            drainTimeout: drainTimeout, timeout: timeout, makeAll: try serve.bool("makeAll"))
    }

    /// The `manifest` section, nil when the file has none.
    private mutating func readManifest(_ root: JSONNode) throws(OptionError) -> ManifestSettings? {
        guard root["manifest"] != nil else { return nil }
        let manifest = reader(root["manifest"]?.expandingShorthand(to: "path"), optionsOf: "manifest")
        let urlPrefix = try manifest.string("urlPrefix")
        // A folder's URL: each file's path is put after it, so a query or fragment would end
        // up before the path, naming another resource.
        if let mark = urlPrefix.first(where: { $0 == "?" || $0 == "#" }) {
            problems.append(
                .init(
                    path: "manifest.urlPrefix", location: root["manifest"]?["urlPrefix"]?.location,
                    message: "a folder's URL, before each file's path: it cannot have a \(mark == "?" ? "query (?)" : "fragment (#)")"))
        }
        let path = try manifest.string("path")
        // Written on this machine, beside the run: a bucket's address would be a folder named "s3:".
        if let address = ObjectStores.notALocalPath(path) {
            problems.append(
                .init(
                    path: "manifest.path", location: root["manifest"]?["path"]?.location,
                    message: "the manifest is written on this machine: its path is a local file, not \(address)"
                        + " (outputs in a bucket are named in it by their address)"))
        }
        // One file for the whole run: a folder's name would be read as the file's, and a
        // placeholder would be written as it stands.
        if path.hasSuffix("/") {
            problems.append(
                .init(
                    path: "manifest.path", location: root["manifest"]?["path"]?.location,
                    message: "names a folder, not a file: name the manifest's file, such as \((path + "images.json").quotedValue)"))
        } else if let placeholder = path.firstMatch(of: /\{[A-Za-z][A-Za-z0-9_:]*\}/) {
            problems.append(
                .init(
                    path: "manifest.path", location: root["manifest"]?["path"]?.location,
                    message: "the manifest is one file for the whole run: its path takes no placeholder, such as \(placeholder.output)"))
        }
        let urlRoot = try manifest.optionalString("urlRoot").map { URL(fileURLWithPath: $0, relativeTo: baseDirectory).standardizedFileURL }
        return ManifestSettings(
            file: URL(fileURLWithPath: path, relativeTo: baseDirectory).standardizedFileURL, urlPrefix: urlPrefix, urlRoot: urlRoot)
    }

    /// Inputs whose scheme pipeline cannot read.
    private mutating func checkInputs(_ inputNodes: [JSONNode]) {
        for (index, node) in inputNodes.enumerated() {
            if case .string(let text) = node.value, let scheme = InputSources.unsupportedScheme(text) {
                problems.append(
                    .init(
                        path: "inputs[\(index)]", location: node.location,
                        message: "only http and https URLs are inputs, not \(scheme)"))
            }
        }
    }
}
