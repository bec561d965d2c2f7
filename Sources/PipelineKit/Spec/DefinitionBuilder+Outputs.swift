import Foundation

/// Building each output: its steps, its encoders, its path's checks, and one output per width
/// × format when it lists them.
extension DefinitionBuilder {
    /// Every output that can be built, and the checks across outputs. An output that lists
    /// `widths` or `formats` becomes one output per combination (see `ResponsiveVariant`).
    mutating func buildOutputs(_ outputNodes: [JSONNode]) -> [OutputDefinition] {
        let built = outputNodes.enumerated().compactMap { index, node in
            buildOutput(node, at: "outputs[\(index)]", index: index).map { (index: index, outputs: $0.outputs, complete: $0.complete) }
        }
        checkOutputsTogether(built, nodes: outputNodes)
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
            let tiles = buildTiles(node, at: path, pathText: pathText),
            let encoders = tiles.map({ [$0.encoder] }) ?? buildEncoders(node, at: path)
        else { return nil }
        let widths = readWidths(node, at: path)
        let listsWidths = node["widths"] != nil
        let steps = buildSteps(node, at: path, resizePerWidth: listsWidths)
        checkPath(pathText, template: template, node: node, at: path, widths: widths, encoders: encoders)
        if tiles != nil, template.namesHash {
            problems.append(
                .init(
                    path: join(path, "path"), location: node["path"]?.location,
                    message: "{hash} names one file by its bytes: a tile pyramid's path cannot use it"))
        }
        var prototype = OutputDefinition(name: name, steps: steps.built, encoder: encoders[0], path: template)
        prototype.pathLocation = node["path"]?.location
        prototype.fileIndex = index
        prototype.tiles = tiles
        readObjectSettings(node, at: path, into: &prototype)
        readPlaceholders(node, into: &prototype)
        warnOfOptionsThatDoNothing(node, at: path, inStore: ObjectStores.isObject(pathText))
        let art = readArt(node, at: path, listsWidths: listsWidths, template: template)
        if node["art"] != nil, art == nil { return nil }
        prototype.art = art ?? []
        warnOfPositionsThatPlaceNothing(node, at: path, listsWidths: listsWidths, hasArt: !prototype.art.isEmpty)
        prototype.inputSubset = readInputSubset(node, at: path)
        guard listsWidths || node["formats"] != nil else { return ([prototype], steps.complete) }
        // Widths that are wrong were reported; the output cannot be made without them.
        guard widths != nil || !listsWidths else { return nil }
        guard let own = variants(of: prototype, widths: widths, encoders: encoders, resize: steps.resize, index: index, at: path),
            let crops = artVariants(of: prototype, art: prototype.art, encoders: encoders, resize: steps.resize, index: index, at: path)
        else { return nil }
        return (own + crops, steps.complete)
    }

    /// An output's steps as built, whether all of them could be, and (when the output lists
    /// widths) its resize step, which is built once per width.
    struct OutputSteps {
        var built: [any ImageProcessing] = []
        var complete: Bool
        var resize: ResizeStep?
    }

    /// The resize step of an output with widths: its options, where it stands among the steps,
    /// and its JSON path.
    struct ResizeStep {
        let options: [String: JSONNode]
        let index: Int
        let path: String
    }

    /// Builds each step of the output at `path`; one whose options are mistyped or break its
    /// rules is left out (and the output marked incomplete).
    private mutating func buildSteps(_ node: JSONNode, at path: String, resizePerWidth: Bool) -> OutputSteps {
        var steps = OutputSteps(complete: isWellShaped(join(path, "steps")))
        guard case .array(let stepNodes)? = node["steps"]?.value else { return steps }
        for (stepIndex, stepNode) in stepNodes.enumerated() {
            let stepPath = "\(path).steps[\(stepIndex)]"
            if resizePerWidth, let options = resizeOptions(stepNode) {
                let resizePath = join(stepPath, "resize")
                guard isWellShaped(stepPath), checkResizeForWidths(options, earlier: steps.resize, at: resizePath, node: stepNode) else {
                    steps.complete = false
                    continue
                }
                steps.resize = ResizeStep(options: options, index: steps.built.count, path: resizePath)
                continue
            }
            // A step whose options are mistyped or unknown cannot be built: its own rules wait for those.
            guard isWellShaped(stepPath), let step = buildStep(stepNode, at: stepPath) else {
                steps.complete = false
                continue
            }
            steps.built.append(step)
        }
        return steps
    }

    /// What the output's path must say: an extension that matches its one format, a bucket when
    /// it is on S3, and `{width}` and `{format}` when it lists several.
    private mutating func checkPath(
        _ pathText: String, template: PathTemplate, node: JSONNode, at path: String, widths: [Int?]?,
        encoders: [EncoderSettings]
    ) {
        let location = node["path"]?.location
        if let pathExtension = template.literalExtension, let named = EncoderSettings.Format(fileExtension: pathExtension) {
            let others = encoders.map(\.format).filter { $0 != named }
            if let first = others.first {
                let hint = others.count == encoders.count && encoders.count == 1 ? ".\(first.fileExtension) or {format}" : "{format}"
                problems.append(
                    .init(
                        path: join(path, "path"), location: location,
                        message: "the path ends in .\(pathExtension) but the output is encoded as "
                            + "\(others.map(\.rawValue).joined(separator: " and ")) (use \(hint))"))
            }
        }
        if let store = ObjectStores.displayName(of: pathText), ObjectLocation(template.authoredFolder + "/") == nil {
            problems.append(
                .init(
                    path: join(path, "path"), location: location,
                    message: "an \(store) output path must name its bucket in full, as \(store.lowercased())://BUCKET/KEY"))
        }
        // Files of one output told apart by nothing in their path would overwrite each other.
        if let widths, widths.count > 1, !template.placeholders.contains(.width) {
            problems.append(
                .init(
                    path: join(path, "path"), location: location,
                    message: "the output lists \(widths.count) widths, so its path needs {width} to tell their files apart"))
        }
        if encoders.count > 1, !template.placeholders.contains(.format) {
            problems.append(
                .init(
                    path: join(path, "path"), location: location,
                    message: "the output lists \(encoders.count) formats, so its path needs {format} to tell their files apart"))
        }
        // The last format is what a browser gets that can show none of the others: the `<img>`
        // of the manifest and `pipeline html`, and a server's answer to `Accept: */*`.
        if encoders.count > 1, let last = encoders.last?.format, !Self.everyBrowserShows.contains(last) {
            let shown = Self.everyBrowserShows.map(\.rawValue).joined(separator: ", ")
            warnings.append(
                "\(join(path, "formats")): the last format, \(last.rawValue), is the fallback (the <img> of a manifest or "
                    + "`pipeline html`, and a server's answer to `Accept: */*`), which a browser that cannot show "
                    + "\(last.rawValue) cannot show either: list one of \(shown) last")
        }
    }

    /// The formats every browser shows, one of which is the fallback of a set of formats.
    static let everyBrowserShows: [EncoderSettings.Format] = [.jpeg, .png, .webp, .gif]

    /// One output per width × format of `prototype`, each with the resize its width makes;
    /// nil when a width's resize cannot be built.
    private mutating func variants(
        of prototype: OutputDefinition, widths: [Int?]?, encoders: [EncoderSettings], resize: ResizeStep?,
        index: Int, at path: String
    ) -> [OutputDefinition]? {
        let enlarges =
            resize.map { resize in
                if case .bool(false)? = resize.options["withoutEnlargement"]?.value { true } else { false }
            } ?? false
        let stepsBeforeResize = resize?.index ?? 0
        var outputs: [OutputDefinition] = []
        for width in widths ?? [nil] {
            var widthSteps = prototype.steps
            if let width {
                guard
                    let step = buildResize(
                        width: width, options: resize?.options ?? [:], at: resize?.path ?? join(path, "widths"),
                        implied: resize == nil)
                else { return nil }
                widthSteps.insert(step, at: stepsBeforeResize)
            }
            // "original" has no resize: the image keeps the width it has there.
            outputs += Self.inEveryFormat(
                prototype, steps: widthSteps, encoders: encoders,
                variant: ResponsiveVariant(
                    width: width, formatIndex: 0, group: index, enlarges: enlarges, stepsBeforeResize: stepsBeforeResize,
                    listsWidths: widths != nil))
        }
        return outputs
    }

    /// `prototype` with `steps` once per encoder of `encoders`, each the `variant` in that format.
    static func inEveryFormat(
        _ prototype: OutputDefinition, steps: [any ImageProcessing], encoders: [EncoderSettings], variant: ResponsiveVariant
    ) -> [OutputDefinition] {
        encoders.enumerated().map { formatIndex, encoder in
            var output = prototype
            output.steps = steps
            output.encoder = encoder
            output.variant = variant
            output.variant?.formatIndex = formatIndex
            return output
        }
    }
}
