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
                maxRedirects: try fetch.int("maxRedirects"),
                staleIfError: try fetch.bool("staleIfError"),
                redactQuery: stringArray(root["fetch"]?["redactQuery"])
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
                inFlightIsSet: root["inFlight"] != nil,
                incremental: try top.bool("incremental"),
                allowEmpty: try top.bool("allowEmpty"),
                caseInsensitive: try top.bool("caseInsensitive"),
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

    /// Every output that can be built, and the checks across outputs. An output that lists
    /// `widths` or `formats` becomes one output per combination (see `ResponsiveVariant`).
    private mutating func buildOutputs(_ outputNodes: [JSONNode], root: JSONNode) -> [OutputDefinition] {
        let built = outputNodes.enumerated().compactMap { index, node in
            buildOutput(node, at: "outputs[\(index)]", index: index).map { (index: index, outputs: $0.outputs, complete: $0.complete) }
        }
        let animation = root["decompress"]?["animation"].flatMap { if case .string(let text) = $0.value { text } else { nil } }
        checkOutputsTogether(built, nodes: outputNodes, keepingAnimation: animation == DecompressSettings.Animation.keep.rawValue)
        return built.flatMap(\.outputs)
    }

    /// The output at `path` (one per width × format when it lists them), and whether every one
    /// of its steps could be built.
    private mutating func buildOutput(_ node: JSONNode, at path: String, index: Int) -> (outputs: [OutputDefinition], complete: Bool)? {
        let options = reader(node, PipelineFormat.outputOptions(processors: processors))
        guard isWellShaped(join(path, "name")), isWellShaped(join(path, "path")),
              let name = try? options.string("name"),
              case .string(let pathText)? = node["path"]?.value,
              let template = try? PathTemplate(pathText),
              let encoders = buildEncoders(node, at: path) else { return nil }
        let widths = readWidths(node, at: path)
        let listsWidths = node["widths"] != nil
        let responsive = listsWidths || node["formats"] != nil

        var steps: [any ImageProcessing] = []
        var complete = isWellShaped(join(path, "steps"))
        // With widths, the resize step is built once per width, from its options and the width.
        var resize: (options: [String: JSONNode], index: Int, path: String)?
        if case .array(let stepNodes)? = node["steps"]?.value {
            for (stepIndex, stepNode) in stepNodes.enumerated() {
                let stepPath = "\(path).steps[\(stepIndex)]"
                if listsWidths, let options = resizeOptions(stepNode) {
                    guard isWellShaped(stepPath), checkResizeForWidths(options, earlier: resize, at: join(stepPath, "resize"), node: stepNode) else {
                        complete = false
                        continue
                    }
                    resize = (options, steps.count, join(stepPath, "resize"))
                    continue
                }
                // A step whose options are mistyped or unknown cannot be built: its own rules wait for those.
                guard isWellShaped(stepPath), let step = buildStep(stepNode, at: stepPath) else {
                    complete = false
                    continue
                }
                steps.append(step)
            }
        }
        if let pathExtension = pathText.split(separator: "/").last?.split(separator: ".").dropFirst().last.map(String.init)?.lowercased(),
           !template.placeholders.contains(.format), encoders.count == 1, let encoder = encoders.first,
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
        // Files of one output told apart by nothing in their path would overwrite each other.
        if let widths, widths.count > 1, !template.placeholders.contains(.width) {
            problems.append(.init(path: join(path, "path"), location: node["path"]?.location,
                                  message: "the output lists \(widths.count) widths, so its path needs {width} to tell their files apart"))
        }
        if encoders.count > 1, !template.placeholders.contains(.format) {
            problems.append(.init(path: join(path, "path"), location: node["path"]?.location,
                                  message: "the output lists \(encoders.count) formats, so its path needs {format} to tell their files apart"))
        }
        var prototype = OutputDefinition(name: name, steps: steps, encoder: encoders[0], path: template)
        prototype.pathLocation = node["path"]?.location
        prototype.fileIndex = index
        readObjectSettings(node, at: path, into: &prototype)
        readPlaceholders(node, into: &prototype)
        guard responsive else { return ([prototype], complete) }
        // Widths that are wrong were reported; the output cannot be made without them.
        guard widths != nil || !listsWidths else { return nil }

        let enlarges = resize.map { options in
            if case .bool(false)? = options.options["withoutEnlargement"]?.value { true } else { false }
        } ?? false
        let stepsBeforeResize = resize?.index ?? 0
        var outputs: [OutputDefinition] = []
        for width in widths ?? [nil] {
            var widthSteps = steps
            if let width {
                guard let step = buildResize(width: width, options: resize?.options ?? [:], at: resize?.path ?? join(path, "widths"),
                                             implied: resize == nil) else { return nil }
                widthSteps.insert(step, at: stepsBeforeResize)
            }
            // "original" has no resize: the image keeps the width it has there.
            for (formatIndex, encoder) in encoders.enumerated() {
                var output = prototype
                output.steps = widthSteps
                output.encoder = encoder
                output.variant = ResponsiveVariant(width: width, formatIndex: formatIndex, group: index, enlarges: enlarges,
                                                   stepsBeforeResize: stepsBeforeResize)
                outputs.append(output)
            }
        }
        return (outputs, complete)
    }

    /// The encoders of an output: its `encode`, or each of its `formats`; nil when one cannot be built.
    private mutating func buildEncoders(_ node: JSONNode, at path: String) -> [EncoderSettings]? {
        switch (node["encode"], node["formats"]) {
        case (nil, nil):
            problems.append(.init(path: path, location: node.location,
                                  message: "missing required key \"encode\" (or \"formats\", a list of encodings shaped like encode)"))
            return nil
        case (_?, let formats?):
            problems.append(.init(path: join(path, "formats"), location: formats.location,
                                  message: "the output gives both encode and formats: give one (formats for several encodings)"))
            return nil
        case (let encode?, nil):
            return buildEncoder(encode, at: join(path, "encode")).map { [$0] }
        case (nil, let formats?):
            guard case .array(let items) = formats.value, isWellShaped(join(path, "formats")) else { return nil }
            let encoders = items.enumerated().compactMap { position, item in buildEncoder(item, at: "\(path).formats[\(position)]") }
            guard encoders.count == items.count, !encoders.isEmpty else { return nil }
            for (position, encoder) in encoders.enumerated() {
                if let first = encoders.firstIndex(where: { $0.format == encoder.format }), first < position {
                    problems.append(.init(path: "\(path).formats[\(position)]", location: items[position].location,
                                          message: "\(encoder.format.rawValue) is listed twice (also formats[\(first)]): both would write the same files"))
                }
            }
            return encoders
        }
    }

    /// The output's `widths`, nil standing for `"original"`; nil when it lists none.
    private mutating func readWidths(_ node: JSONNode, at path: String) -> [Int?]? {
        guard case .array(let items)? = node["widths"]?.value, isWellShaped(join(path, "widths")) else { return nil }
        var widths: [Int?] = []
        for (position, item) in items.enumerated() {
            let width: Int? = if case .number(let number, true) = item.value { Int(exactly: number) } else { nil }
            if widths.contains(width) {
                problems.append(.init(path: "\(path).widths[\(position)]", location: item.location,
                                      message: "\(item.jsonText) is listed twice"))
                continue
            }
            widths.append(width)
        }
        return widths
    }

    /// The options of a `resize` step node, or nil when the node is another step.
    private func resizeOptions(_ node: JSONNode) -> [String: JSONNode]? {
        guard case .object(let members) = node.value, members.count == 1, let member = members.first, member.key == "resize",
              case .object(let optionMembers) = member.value.value else { return nil }
        return Dictionary(optionMembers.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// An output with widths has one resize step, and its widths are the step's width: the step
    /// itself names none.
    private mutating func checkResizeForWidths(_ options: [String: JSONNode], earlier: (options: [String: JSONNode], index: Int, path: String)?,
                                               at path: String, node: JSONNode) -> Bool {
        if earlier != nil {
            problems.append(.init(path: path, location: node.location,
                                  message: "an output with widths has one resize step (each of widths becomes its width), not several"))
            return false
        }
        for key in ["width", "height"] {
            if let value = options[key] {
                problems.append(.init(path: join(path, key), location: value.location,
                                      message: "an output with widths gives its resize step no \(key): each of widths becomes its width"))
                return false
            }
        }
        return true
    }

    /// The resize one width of an output makes: its resize step's options (fit inside when the
    /// output has none) with that width, never enlarging unless the step says so.
    private mutating func buildResize(width: Int, options: [String: JSONNode], at path: String, implied: Bool) -> (any ImageProcessing)? {
        guard let type = processors.processor(named: "resize") else {
            problems.append(.init(path: path, location: nil, message: "widths need the resize step, which this command does not have"))
            return nil
        }
        var values = options
        values["width"] = JSONNode(plain: width)
        if values["withoutEnlargement"] == nil { values["withoutEnlargement"] = JSONNode(plain: true) }
        if implied { values["fit"] = JSONNode(plain: "inside") }
        do {
            return try type.init(options: ProcessorOptions(values: values, definitions: type.options, baseDirectory: baseDirectory))
        } catch {
            let problemPath = implied ? path : error.option.map { join(path, $0) } ?? path
            problems.append(.init(path: problemPath, location: error.option.flatMap { options[$0]?.location }, message: error.message))
            return nil
        }
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

    private mutating func buildEncoder(_ node: JSONNode, at path: String) -> EncoderSettings? {
        guard case .string(let formatName)? = node["format"]?.value,
              let format = EncoderSettings.Format(rawValue: formatName) else { return nil }
        // Keys the format does not know were reported by the shape check; the rest still builds.
        let known = Set(EncoderSettings.options(for: format).map(\.name))
        guard case .object(let members) = node.value else { return nil }
        let values = Dictionary(members.filter { known.contains($0.key) }.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        do {
            return try EncoderSettings(format: format, options: ProcessorOptions(values: values, definitions: EncoderSettings.options(for: format),
                                                                                 baseDirectory: baseDirectory))
        } catch {
            // A mistyped value was reported by the shape check; what is left are rules across options.
            guard isWellShaped(path) else { return nil }
            problems.append(.init(path: error.option.map { join(path, $0) } ?? path,
                                  location: error.option.flatMap { values[$0]?.location } ?? node.location, message: error.message))
            return nil
        }
    }

    /// Duplicate names, and templates two outputs share without a placeholder that tells them
    /// apart. An output with a step that could not be built is left out of the second check: its
    /// sizes are not known. The widths and formats of one output are told apart by its own
    /// check (`{width}`, `{format}`), so they are compared only with other outputs.
    private mutating func checkOutputsTogether(_ built: [(index: Int, outputs: [OutputDefinition], complete: Bool)], nodes: [JSONNode],
                                               keepingAnimation: Bool) {
        var firstByName: [String: Int] = [:]
        var sharers: [String: TemplateSharers] = [:]
        for (index, outputs, complete) in built {
            guard let name = outputs.first?.name else { continue }
            let path = "outputs[\(index)]"
            if let first = firstByName[name] {
                problems.append(.init(path: join(path, "name"), location: nodes[index]["name"]?.location,
                                      message: "output name \"\(name)\" is already used by outputs[\(first)]"))
            } else {
                firstByName[name] = index
            }
            // One template written twice makes the same paths unless a placeholder in it takes
            // different values for the two outputs whatever the input: {output}, {format}, or a
            // {width} or {height} both outputs' steps fix, to different sizes. Outputs are
            // grouped by what tells them apart, so each is looked up, not compared with all.
            guard complete else { continue }
            var reported = false
            for output in outputs {
                let placeholders = output.path.placeholders
                var group = output.path.text
                if placeholders.contains(.output) { group += "\u{0}" + output.name }
                if placeholders.contains(.format) { group += "\u{0}" + output.encoder.format.fileExtension }
                let fixed = output.variant.map { (width: $0.width, height: Int?.none) } ?? output.fixedSize(keepingAnimation: keepingAnimation)
                let size = TemplateSharers.Size(width: placeholders.contains(.width) ? fixed.width : nil,
                                                height: placeholders.contains(.height) ? fixed.height : nil)
                WorkCounter.add(.templatePairs)
                if !reported, let first = sharers[group]?.firstClash(with: size), first != index {
                    reported = true
                    let sizes = placeholders.contains(.width) || placeholders.contains(.height)
                        ? " ({width} and {height} tell outputs apart only when both outputs' steps fix them, to different sizes)" : ""
                    problems.append(.init(path: join(path, "path"), location: nodes[index]["path"]?.location,
                                          message: "outputs[\(first)] has the same path template \"\(output.path.text)\": both would write the same files\(sizes)"))
                }
                sharers[group, default: TemplateSharers()].add(index, size: size)
            }
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

    /// The strings of an array of strings (checked by its shape); [] when absent.
    func stringArray(_ node: JSONNode?) -> [String] {
        guard case .array(let items)? = node?.value else { return [] }
        return items.compactMap { if case .string(let value) = $0.value { value } else { nil } }
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
