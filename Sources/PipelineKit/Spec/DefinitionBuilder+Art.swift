import Foundation

/// Art direction: an output's `art` entries, each another crop at widths of its own.
extension DefinitionBuilder {
    /// The shape of `art` in the pipeline file.
    static let artShape = ValueShape.array(
        .object([
            Option(
                "media", .string(nonEmpty: true), required: true,
                help: "the media query the crop is for, as <source media> takes it, for example \"(max-width: 640px)\""),
            Option(
                "aspectRatio", .string(nonEmpty: true), required: true,
                help:
                    "the crop's width to height, W:H, for example \"4:5\" or \"1:1\"; cropped as the resize step's fit cover, at its position"
            ),
            Option("widths", .array(.integer(1...100_000), minCount: 1), required: true, help: "the crop's widths in pixels"),
            Option(
                "sizes", .string(nonEmpty: true),
                help: "the sizes attribute of its sources, when not the page's, for example \"(max-width: 640px) 100vw, 640px\""),
        ]), minCount: 1)

    /// The output's `art` entries, checked: each a ratio `W:H`, widths listed once, an output
    /// with `widths` of its own, and a path with `{art}` (and `{width}` for several widths).
    /// Nil when the output has none or one is wrong (reported).
    mutating func readArt(_ node: JSONNode, at path: String, listsWidths: Bool, template: PathTemplate) -> [ArtDirection]? {
        guard let artNode = node["art"], isWellShaped(join(path, "art")), case .array(let items) = artNode.value else { return nil }
        var entries: [ArtDirection] = []
        var complete = true
        for (index, item) in items.enumerated() {
            let itemPath = "\(path).art[\(index)]"
            guard case .string(let media)? = item["media"]?.value, case .string(let aspect)? = item["aspectRatio"]?.value,
                case .array(let widthNodes)? = item["widths"]?.value
            else { return nil }
            guard let ratio = ArtDirection.ratio(of: aspect) else {
                problems.append(
                    .init(
                        path: join(itemPath, "aspectRatio"), location: item["aspectRatio"]?.location,
                        message: "expected a ratio W:H of two positive numbers, such as \"1:1\" or \"4:5\", got \(aspect.quotedValue)"))
                complete = false
                continue
            }
            let (widths, once) = readArtWidths(widthNodes, at: itemPath)
            if !once { complete = false }
            var sizes: String?
            if case .string(let text)? = item["sizes"]?.value { sizes = text }
            let entry = ArtDirection(media: media, aspectRatio: aspect, ratio: ratio, widths: widths, sizes: sizes)
            if let earlier = entries.firstIndex(where: { $0.fileTag == entry.fileTag }) {
                problems.append(
                    .init(
                        path: join(itemPath, "aspectRatio"), location: item["aspectRatio"]?.location,
                        message: "art[\(earlier)] has the same aspect ratio, so {art} would give their files one name"))
                complete = false
            } else if let earlier = entries.firstIndex(where: { abs($0.ratio - entry.ratio) < 1e-9 }) {
                problems.append(
                    .init(
                        path: join(itemPath, "aspectRatio"), location: item["aspectRatio"]?.location,
                        message: "art[\(earlier)] is the same crop (\(entries[earlier].aspectRatio) is \(aspect)): give one entry"))
                complete = false
            }
            if let fault = MediaQuerySyntax.fault(of: media) {
                problems.append(
                    .init(path: join(itemPath, "media"), location: item["media"]?.location, message: "\(media.quotedValue) \(fault)"))
                complete = false
                continue
            }
            if ArtDirection.matchesEveryScreen(media) {
                warnings.append(
                    "\(itemPath).media: \(media) matches every screen, and a browser takes the first source that matches: "
                        + "the output's own files, listed after the art, are never chosen")
            }
            if let earlier = entries.firstIndex(where: { ArtDirection.shadows($0.media, media) }) {
                warnings.append(
                    "\(itemPath).media: \(media) is never chosen: art[\(earlier)] (\(entries[earlier].media)), listed before it, "
                        + "matches every width it does, and a browser takes the first that matches: list it before art[\(earlier)]")
            }
            entries.append(entry)
        }
        if !artFits(node, at: path, listsWidths: listsWidths, template: template, entries: entries) { complete = false }
        return complete ? entries : nil
    }

    /// Whether the output around `entries` has what art needs, each want reported: widths of
    /// its own, and `{art}` in its path (with `{width}` when an entry lists several).
    private mutating func artFits(
        _ node: JSONNode, at path: String, listsWidths: Bool, template: PathTemplate, entries: [ArtDirection]
    ) -> Bool {
        var fits = true
        if !listsWidths {
            problems.append(
                .init(
                    path: join(path, "art"), location: node["art"]?.location,
                    message: "art needs the output's own widths: its crops are sources beside them"))
            fits = false
        }
        if !template.placeholders.contains(.art) {
            problems.append(
                .init(
                    path: join(path, "path"), location: node["path"]?.location,
                    message: "the output has art crops, so its path needs {art} to tell their files from its own"))
            fits = false
        }
        if entries.contains(where: { $0.widths.count > 1 }), !template.placeholders.contains(.width) {
            problems.append(
                .init(
                    path: join(path, "path"), location: node["path"]?.location,
                    message: "an art entry lists several widths, so the path needs {width} to tell their files apart"))
            fits = false
        }
        return fits
    }

    /// An art entry's widths, and whether each is listed once (a repeat is reported).
    private mutating func readArtWidths(_ widthNodes: [JSONNode], at itemPath: String) -> (widths: [Int], once: Bool) {
        var widths: [Int] = []
        var once = true
        for (position, widthNode) in widthNodes.enumerated() {
            guard case .number(let number, true) = widthNode.value, let width = Int(exactly: number) else { continue }
            if widths.contains(width) {
                problems.append(
                    .init(path: "\(itemPath).widths[\(position)]", location: widthNode.location, message: "\(width) is listed twice"))
                once = false
            }
            widths.append(width)
        }
        return (widths, once)
    }

    /// The most the resize step takes as its `height`.
    static func tallest(_ resize: any ImageProcessing.Type) -> Int {
        guard let option = resize.options.first(where: { $0.name == "height" }), case .integer(let range) = option.shape else {
            return Int.max
        }
        return range.upperBound
    }

    /// The variants of each art entry of `prototype`: per width, the output's resize with that
    /// width and the height of the entry's ratio, fit cover (at the resize's position), then
    /// each of the output's formats.
    mutating func artVariants(
        of prototype: OutputDefinition, art: [ArtDirection], encoders: [EncoderSettings], resize: ResizeStep?,
        index: Int, at path: String
    ) -> [OutputDefinition]? {
        var outputs: [OutputDefinition] = []
        let stepsBeforeResize = resize?.index ?? 0
        // Looked up once: `buildResize` reports a command without the step.
        let resizeType = processors.processor(named: "resize")
        let tallest = resizeType.map(Self.tallest) ?? Int.max
        let base = baseDirectory
        let faceFinder = processors.faceFinder
        for (artIndex, entry) in art.enumerated() {
            for width in entry.widths {
                // Enlarging is allowed: the crop's box never exceeds the image (`ArtCrop.box`),
                // so neither is a height past what the resize takes ever made whole.
                var options = resize?.options ?? [:]
                options["fit"] = JSONNode(plain: "cover")
                options["withoutEnlargement"] = JSONNode(plain: false)
                options["height"] = JSONNode(plain: min(entry.height(forWidth: width), tallest))
                guard
                    let full = buildResize(
                        width: width, options: options, at: resize?.path ?? "\(path).art[\(artIndex)]", implied: false),
                    let type = resizeType
                else { return nil }
                let boxOptions = options
                let step = ArtCrop(width: width, ratio: entry.ratio, full: full) { box in
                    var values = boxOptions
                    values["width"] = JSONNode(plain: box.width)
                    values["height"] = JSONNode(plain: box.height)
                    return try? type.init(
                        options: ProcessorOptions(
                            values: values, definitions: type.options, baseDirectory: base, faceFinder: faceFinder))
                }
                var steps = prototype.steps
                steps.insert(step, at: stepsBeforeResize)
                outputs += Self.inEveryFormat(
                    prototype, steps: steps, encoders: encoders,
                    variant: ResponsiveVariant(
                        width: width, formatIndex: 0, group: index, enlarges: false, stepsBeforeResize: stepsBeforeResize,
                        art: artIndex))
            }
        }
        return outputs
    }
}
