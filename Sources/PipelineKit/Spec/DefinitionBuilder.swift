import Foundation

/// Turns a validated document into typed settings, and finds what the shapes alone cannot:
/// processor option combinations, duplicate output names, paths that clash or lie about format.
///
/// When the shapes had problems, it still checks every part whose shape is right (each step,
/// each output), so that one pass lists them all, and builds no definition.
struct DefinitionBuilder {
    let processors: ProcessorRegistry
    let baseDirectory: URL
    /// The JSON paths the shape validator found problems at.
    let shapeProblemPaths: [String]
    var problems: [PipelineFileError.Problem] = []

    init(processors: ProcessorRegistry, baseDirectory: URL, shapeProblems: [PipelineFileError.Problem]) {
        self.processors = processors
        self.baseDirectory = baseDirectory
        shapeProblemPaths = shapeProblems.map(\.path)
    }

    /// Whether the shape validator found nothing wrong at `path` or inside it.
    private func isWellShaped(_ path: String) -> Bool {
        !shapeProblemPaths.contains { $0 == path || $0.hasPrefix(path + ".") || $0.hasPrefix(path + "[") }
    }

    mutating func build(_ root: JSONNode) -> PipelineDefinition? {
        guard shapeProblemPaths.isEmpty else {
            // Settings are read only from a well-shaped file; the parts are checked anyway.
            if case .array(let inputNodes)? = root["inputs"]?.value { checkInputs(inputNodes) }
            if case .array(let outputNodes)? = root["outputs"]?.value { _ = buildOutputs(outputNodes, root: root) }
            return nil
        }
        do {
            let top = reader(root, PipelineFormat.topLevelOptions(processors: processors))
            let fetch = reader(root["fetch"], optionsOf: "fetch")
            let decompress = reader(root["decompress"], optionsOf: "decompress")
            // "resize" is the stage's old name: still read, with a warning.
            let renamed = PipelineFormat.renamedKeyFindings(in: root)
            problems += renamed.problems
            let process = reader(root["process"] ?? root["resize"], optionsOf: root["process"] == nil ? "resize" : "process")
            let encode = reader(root["encode"], optionsOf: "encode")

            let decompressSettings = DecompressSettings(
                concurrency: try decompress.int("concurrency"),
                maxPixels: try decompress.int("maxPixels"),
                autorotate: try decompress.bool("autorotate"),
                failOn: try decompress.choice("failOn", as: DecompressSettings.FailOn.self),
                fastShrinkOnLoad: try decompress.bool("fastShrinkOnLoad"),
                timeout: Units.seconds(in: try decompress.string("timeout")) ?? DecompressSettings.defaultTimeout,
                animation: try decompress.choice("animation", as: DecompressSettings.Animation.self)
            )
            let processSettings = StageSettings(concurrency: try process.int("concurrency"))
            let encodeSettings = StageSettings(concurrency: try encode.int("concurrency"))
            let fetchSettings = FetchSettings(
                concurrency: try fetch.int("concurrency"),
                maxBytes: byteCount(root["fetch"]?["maxBytes"], default: StageDefaults.maxBytes),
                timeout: Units.seconds(in: try fetch.string("timeout")) ?? 30,
                connectTimeout: Units.seconds(in: try fetch.string("connectTimeout")) ?? 10,
                retries: try fetch.int("retries"),
                headers: stringMap(root["fetch"]?["headers"]),
                userAgent: try fetch.string("userAgent"),
                maxRedirects: try fetch.int("maxRedirects")
            )
            let cache = reader(root["cache"], optionsOf: "cache")
            let cacheSettings = CacheSettings(
                concurrency: try cache.int("concurrency"),
                enabled: try cache.bool("enabled"),
                directory: URL(fileURLWithPath: try cache.string("directory"), relativeTo: baseDirectory).standardizedFileURL,
                maxSize: byteCount(root["cache"]?["maxSize"], default: 1_000_000_000)
            )

            guard case .array(let outputNodes)? = root["outputs"]?.value,
                  case .array(let inputNodes)? = root["inputs"]?.value else { return nil }
            checkInputs(inputNodes)
            let outputs = buildOutputs(outputNodes, root: root)

            var definition = PipelineDefinition(
                name: try top.optionalString("name") ?? "pipeline",
                baseDirectory: baseDirectory,
                inputs: inputNodes.compactMap(inputEntry),
                fetch: fetchSettings,
                cache: cacheSettings,
                decompress: decompressSettings,
                process: processSettings,
                encode: encodeSettings,
                inFlight: try top.optionalInt("inFlight") ?? StageDefaults.inFlight(
                    decompress: decompressSettings.concurrency, process: processSettings.concurrency,
                    encode: encodeSettings.concurrency),
                incremental: try top.bool("incremental"),
                allowEmpty: try top.bool("allowEmpty"),
                outputs: outputs,
                warnings: renamed.warnings
            )
            let s3 = reader(root["s3"], optionsOf: "s3")
            definition.s3 = S3Settings(profile: try s3.optionalString("profile"), region: try s3.optionalString("region"),
                                       endpoint: try s3.optionalString("endpoint"))
            if let endpoint = definition.s3.endpoint, !InputEnumerator.isURL(endpoint) {
                problems.append(.init(path: "s3.endpoint", location: root["s3"]?["endpoint"]?.location,
                                      message: "the endpoint \"\(endpoint)\" is not an http or https URL"))
            }
            if root["manifest"] != nil {
                let manifest = reader(root["manifest"], optionsOf: "manifest")
                definition.manifest = ManifestSettings(
                    file: URL(fileURLWithPath: try manifest.string("path"), relativeTo: baseDirectory).standardizedFileURL,
                    urlPrefix: try manifest.string("urlPrefix"))
            }
            return definition
        } catch {
            // The shapes were checked, so this is a definition and its reader disagreeing.
            problems.append(.init(path: error.option ?? "", location: nil, message: "internal error: \(error.message)"))
            return nil
        }
    }

    private mutating func checkInputs(_ inputNodes: [JSONNode]) {
        for (index, node) in inputNodes.enumerated() {
            if case .string(let text) = node.value, let scheme = InputEnumerator.unsupportedScheme(text) {
                problems.append(.init(path: "inputs[\(index)]", location: node.location,
                                      message: "only http and https URLs are inputs, not \(scheme)"))
            }
        }
    }

    /// Every output that can be built, and the checks across outputs.
    private mutating func buildOutputs(_ outputNodes: [JSONNode], root: JSONNode) -> [OutputDefinition] {
        let built = outputNodes.enumerated().compactMap { index, node in
            buildOutput(node, at: "outputs[\(index)]").map { (index: index, output: $0.output, complete: $0.complete) }
        }
        let animation = root["decompress"]?["animation"].flatMap { if case .string(let text) = $0.value { text } else { nil } }
        checkOutputsTogether(built, nodes: outputNodes, keepingAnimation: animation == DecompressSettings.Animation.keep.rawValue)
        return built.map(\.output)
    }

    /// The output at `path`, and whether every one of its steps could be built.
    private mutating func buildOutput(_ node: JSONNode, at path: String) -> (output: OutputDefinition, complete: Bool)? {
        let options = reader(node, PipelineFormat.outputOptions(processors: processors))
        guard isWellShaped(join(path, "name")), isWellShaped(join(path, "path")),
              let name = try? options.string("name"),
              case .string(let pathText)? = node["path"]?.value,
              let template = try? PathTemplate(pathText),
              let encodeNode = node["encode"],
              let encoder = buildEncoder(encodeNode) else { return nil }

        var steps: [any ImageProcessing] = []
        var complete = isWellShaped(join(path, "steps"))
        if case .array(let stepNodes)? = node["steps"]?.value {
            for (index, stepNode) in stepNodes.enumerated() {
                let stepPath = "\(path).steps[\(index)]"
                // A step whose options are mistyped or unknown cannot be built: its own rules wait for those.
                guard isWellShaped(stepPath), let step = buildStep(stepNode, at: stepPath) else {
                    complete = false
                    continue
                }
                steps.append(step)
            }
        }
        if let pathExtension = pathText.split(separator: "/").last?.split(separator: ".").dropFirst().last.map(String.init)?.lowercased(),
           !template.placeholders.contains(.format),
           let other = EncoderSettings.Format.allCases.first(where: { $0.acceptedExtensions.contains(pathExtension) }),
           other != encoder.format {
            problems.append(.init(path: join(path, "path"), location: node["path"]?.location,
                                  message: "the path ends in .\(pathExtension) but the output is encoded as \(encoder.format.rawValue)"
                                      + " (use .\(encoder.format.fileExtension) or {format})"))
        }
        if S3Location.isS3(pathText), !S3Location.isS3(template.authoredFolder + "/") || S3Location(template.authoredFolder + "/") == nil {
            problems.append(.init(path: join(path, "path"), location: node["path"]?.location,
                                  message: "an S3 output path must name its bucket in full, as s3://BUCKET/KEY"))
        }
        var output = OutputDefinition(name: name, steps: steps, encoder: encoder, path: template)
        output.pathLocation = node["path"]?.location
        readObjectSettings(node, at: path, into: &output)
        readPlaceholders(node, into: &output)
        return (output, complete)
    }

    private mutating func buildStep(_ node: JSONNode, at path: String) -> (any ImageProcessing)? {
        guard case .object(let members) = node.value, let member = members.first,
              let type = processors.processor(named: member.key),
              case .object(let optionMembers) = member.value.value else { return nil }
        let values = Dictionary(optionMembers.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        do {
            return try type.init(options: ProcessorOptions(values: values, definitions: type.options, baseDirectory: baseDirectory))
        } catch {
            let stepPath = join(path, member.key)
            let optionNode = error.option.flatMap { values[$0] }
            let problemPath = error.option.map { join(stepPath, $0) } ?? stepPath
            problems.append(.init(path: problemPath, location: optionNode?.location ?? member.value.location, message: error.message))
            return nil
        }
    }

    private func buildEncoder(_ node: JSONNode) -> EncoderSettings? {
        guard case .string(let formatName)? = node["format"]?.value,
              let format = EncoderSettings.Format(rawValue: formatName) else { return nil }
        // Keys the format does not know were reported by the shape check; the rest still builds.
        let known = Set(EncoderSettings.options(for: format).map(\.name))
        guard case .object(let members) = node.value else { return nil }
        let values = Dictionary(members.filter { known.contains($0.key) }.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return try? EncoderSettings(format: format, options: ProcessorOptions(values: values, definitions: EncoderSettings.options(for: format)))
    }

    /// Duplicate names, and templates two outputs share without a placeholder that tells them
    /// apart. An output with a step that could not be built is left out of the second check: its
    /// sizes are not known.
    private mutating func checkOutputsTogether(_ built: [(index: Int, output: OutputDefinition, complete: Bool)], nodes: [JSONNode],
                                               keepingAnimation: Bool) {
        var firstByName: [String: Int] = [:]
        var sharers: [String: TemplateSharers] = [:]
        let fixedSizes = Dictionary(uniqueKeysWithValues: built.map { ($0.index, $0.output.fixedSize(keepingAnimation: keepingAnimation)) })
        for (index, output, complete) in built {
            let path = "outputs[\(index)]"
            if let first = firstByName[output.name] {
                problems.append(.init(path: join(path, "name"), location: nodes[index]["name"]?.location,
                                      message: "output name \"\(output.name)\" is already used by outputs[\(first)]"))
            } else {
                firstByName[output.name] = index
            }
            // One template written twice makes the same paths unless a placeholder in it takes
            // different values for the two outputs whatever the input: {output}, {format}, or a
            // {width} or {height} both outputs' steps fix, to different sizes. Outputs are
            // grouped by what tells them apart, so each is looked up, not compared with all.
            guard complete else { continue }
            let placeholders = output.path.placeholders
            var group = output.path.text
            if placeholders.contains(.output) { group += "\u{0}" + output.name }
            if placeholders.contains(.format) { group += "\u{0}" + output.encoder.format.fileExtension }
            let fixed = fixedSizes[index] ?? (nil, nil)
            let size = TemplateSharers.Size(width: placeholders.contains(.width) ? fixed.width : nil,
                                            height: placeholders.contains(.height) ? fixed.height : nil)
            WorkCounter.add(.templatePairs)
            if let first = sharers[group]?.firstClash(with: size) {
                let sizes = placeholders.contains(.width) || placeholders.contains(.height)
                    ? " ({width} and {height} tell outputs apart only when both outputs' steps fix them, to different sizes)" : ""
                problems.append(.init(path: join(path, "path"), location: nodes[index]["path"]?.location,
                                      message: "outputs[\(first)] has the same path template \"\(output.path.text)\": both would write the same files\(sizes)"))
            }
            sharers[group, default: TemplateSharers()].add(index, size: size)
        }
    }

    private func reader(_ node: JSONNode?, _ options: [Option], ignoring ignored: String? = nil) -> ProcessorOptions {
        guard case .object(let members)? = node?.value else { return ProcessorOptions(values: [:], definitions: options) }
        let values = Dictionary(members.filter { $0.key != ignored }.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return ProcessorOptions(values: values, definitions: options)
    }

    private func reader(_ node: JSONNode?, optionsOf section: String) -> ProcessorOptions {
        let option = PipelineFormat.topLevelOptions(processors: processors).first { $0.name == section }
        guard case .object(let options)? = option?.shape else { return reader(node, []) }
        return reader(node, options)
    }

    private func byteCount(_ node: JSONNode?, default fallback: Int64) -> Int64 {
        switch node?.value {
        case .number(let number, _)?: Int64(exactly: number) ?? fallback
        case .string(let text)?: Units.bytes(in: text) ?? fallback
        default: fallback
        }
    }

    func stringMap(_ node: JSONNode?) -> [String: String] {
        guard case .object(let members)? = node?.value else { return [:] }
        var map: [String: String] = [:]
        for member in members { if case .string(let value) = member.value.value { map[member.key] = value } }
        return map
    }

    private func inputEntry(_ node: JSONNode) -> InputEntry? {
        switch node.value {
        case .string(let text): .pattern(text)
        case .object: node["list"].flatMap { if case .string(let path) = $0.value { .list(path) } else { nil } }
        default: nil
        }
    }
}

extension DefinitionBuilder {
    /// An S3 output's `cacheControl` and `metadata`. Metadata names become HTTP header names, so
    /// they are kept to what every S3 server stores as written; `pipeline-` is the runner's own.
    mutating func readObjectSettings(_ node: JSONNode, at path: String, into output: inout OutputDefinition) {
        if case .string(let value)? = node["cacheControl"]?.value { output.cacheControl = value }
        output.metadata = stringMap(node["metadata"])
        for name in output.metadata.keys.sorted() {
            let valid = !name.isEmpty && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            if !valid || name.hasPrefix("pipeline-") {
                problems.append(.init(path: join(path, "metadata") + "." + name, location: node["metadata"]?[name]?.location,
                                      message: "metadata name \"\(name)\" must be lower-case letters, digits and -, and not start with pipeline-"))
            }
            // Sent as an HTTP header: printable ASCII only.
            if let value = output.metadata[name], !value.unicodeScalars.allSatisfy({ (" "..."~").contains($0) }) {
                problems.append(.init(path: join(path, "metadata") + "." + name, location: node["metadata"]?[name]?.location,
                                      message: "metadata \"\(name)\" must be printable ASCII (it is sent as an HTTP header)"))
            }
        }
    }

    /// The placeholders an output asks the manifest for, and how they are made.
    func readPlaceholders(_ node: JSONNode, into output: inout OutputDefinition) {
        if case .array(let kinds)? = node["placeholders"]?.value {
            output.placeholders = kinds.compactMap { if case .string(let name) = $0.value { PlaceholderKind(rawValue: name) } else { nil } }
        }
        var definitions: [Option] = []
        if let option = PipelineFormat.outputOptions(processors: processors).first(where: { $0.name == "placeholderOptions" }),
           case .object(let options) = option.shape {
            definitions = options
        }
        let options = reader(node["placeholderOptions"], definitions)
        if let settings = try? PlaceholderSettings(
            lqipWidth: options.int("lqipWidth"), lqipQuality: options.int("lqipQuality"),
            blurhashXComponents: options.int("blurhashX"), blurhashYComponents: options.int("blurhashY")) {
            output.placeholderSettings = settings
        }
    }
}
