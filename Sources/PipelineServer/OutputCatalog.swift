#if Server
import Foundation
import PipelineKit

/// What a server may answer, from the plan alone: the outputs by name and the inputs by the
/// name a URL gives them. A request is looked up here, never joined onto the file system, so a
/// path that names no planned input (`..`, an encoded one, a NUL) finds nothing.
struct OutputCatalog: Sendable {
    /// One output of the pipeline file, however many widths and formats it lists.
    struct Output: Sendable {
        /// Its name in the pipeline file: the URL's first part.
        let name: String
        /// The encodings it is made in, in the order the file lists them.
        let formats: [EncoderSettings.Format]
        /// The numeric widths it lists, in the file's order; empty when it lists none.
        let widths: [Int]
        /// Whether it lists `"original"` (beside them, or alone): the file at the image's own width,
        /// which in a set that enlarges is not the widest.
        var listsOriginal = false
        /// The inputs it is made for, when the file chooses them.
        var subset: InputSubset? = nil
        /// How many hex digits of its bytes' SHA-256 name its files, when its path has `{hash}`.
        var hashLength: Int? = nil
        /// Its art direction crops, in the file's order: what `?art=` may name.
        var art: [ArtDirection] = []

        /// The index in `art` of the crop `text` names: its aspect ratio as the file writes it
        /// (`1:1`), or as its files' names do (`1x1`).
        func artIndex(named text: String) -> Int? {
            art.firstIndex { $0.aspectRatio == text || $0.fileTag == "-" + text }
        }
    }

    /// One input a request may name: which source of the plan, and the listing that names it.
    struct Input: Sendable {
        /// The source's index in the plan's items.
        let item: Int
        /// The input as the listing names it, to find its report.
        let listing: InputFile
    }

    let outputs: [String: Output]
    /// The names of the tile pyramids, which are not served, for the answer that says so.
    let tilePyramids: Set<String>
    /// The inputs by the name a URL gives them (`subfolder/fileName`), spelled byte for byte:
    /// two globs may give two files one name (`a/*.jpg` and `b/*.jpg` both hold `x.jpg`), in
    /// the order the run reports them.
    private let inputs: [DiskPath: [Input]]
    /// The inputs the plan refused as a whole (every output's file name too long, a path that
    /// would leave its folder), by the name a URL gives them, with the failure a run gives them:
    /// such a name is answered with why, not as a name no input has.
    private let refused: [DiskPath: (listing: InputFile, error: ItemError)]

    /// The input a URL names `name`, spelled as the file's name is, byte for byte: the first
    /// of that name.
    func input(named name: String) -> Input? { inputs[DiskPath(name)]?.first }

    /// Why the plan refused the input a URL names `name`, when it refused it and planned no
    /// other of that name.
    func refusal(ofInputNamed name: String) -> (listing: InputFile, error: ItemError)? { refused[DiskPath(name)] }

    /// The input a URL names `name` for `output`: the first of that name the output is made
    /// for, else the first (which the output then refuses).
    func input(named name: String, for output: Output) -> Input? {
        guard let named = inputs[DiskPath(name)] else { return nil }
        return named.first { makes(output, for: $0) } ?? named.first
    }
    /// What an output's subset of the inputs is matched with.
    private let baseDirectory: URL
    private let caseInsensitive: Bool

    /// Whether `output` is made for `input`: an output whose `"inputs"` leave it out is not.
    func makes(_ output: Output, for input: Input) -> Bool {
        output.subset?.contains(input.listing, baseDirectory: baseDirectory, caseInsensitive: caseInsensitive) ?? true
    }

    init(plan: RunPlan) {
        var formats: [String: [(index: Int, format: EncoderSettings.Format)]] = [:]
        var widths: [String: [Int]] = [:]
        var subsets: [String: InputSubset] = [:]
        var hashLengths: [String: Int] = [:]
        var art: [String: [ArtDirection]] = [:]
        // Outputs that list `"original"`: a file without a resize of its own, of listed widths.
        var original: Set<String> = []
        baseDirectory = plan.definition.baseDirectory
        caseInsensitive = plan.definition.caseInsensitive
        tilePyramids = Set(plan.definition.outputs.filter { $0.tiles != nil }.map(\.name))
        var order: [String] = []
        // A tile pyramid is a folder of tiles, not one file to answer with.
        for output in plan.definition.outputs where output.tiles == nil {
            if formats[output.name] == nil { order.append(output.name) }
            if let subset = output.inputSubset { subsets[output.name] = subset }
            if let length = output.path.hashLength { hashLengths[output.name] = length }
            if !output.art.isEmpty { art[output.name] = output.art }
            let index = output.variant?.formatIndex ?? 0
            if !(formats[output.name] ?? []).contains(where: { $0.index == index }) {
                formats[output.name, default: []].append((index, output.encoder.format))
            }
            if let variant = output.variant, variant.art == nil {
                if let width = variant.width {
                    if !(widths[output.name] ?? []).contains(width) { widths[output.name, default: []].append(width) }
                } else if variant.listsWidths {
                    original.insert(output.name)
                }
            }
        }
        var outputs: [String: Output] = [:]
        for name in order {
            outputs[name] = Output(
                name: name, formats: (formats[name] ?? []).sorted { $0.index < $1.index }.map(\.format), widths: widths[name] ?? [],
                listsOriginal: original.contains(name),
                subset: subsets[name], hashLength: hashLengths[name], art: art[name] ?? [])
        }
        self.outputs = outputs
        var inputs: [DiskPath: [Input]] = [:]
        var refused: [DiskPath: (listing: InputFile, error: ItemError)] = [:]
        for (index, item) in plan.items.enumerated() {
            for listing in item.listings {
                let name = DiskPath(Self.name(of: listing.input))
                guard let refusal = listing.refusal else {
                    inputs[name, default: []].append(Input(item: index, listing: listing.input))
                    continue
                }
                if refused[name] == nil { refused[name] = (listing.input, ItemError(.refused, stage: .fetch, reason: refusal)) }
            }
        }
        self.inputs = inputs
        self.refused = refused.filter { inputs[$0.key] == nil }
    }

    /// The name a URL gives an input: `{dir}/{name}`, or `{name}` alone when `{dir}` is empty.
    static func name(of input: InputFile) -> String {
        input.subfolder.isEmpty ? input.fileName : input.subfolder + "/" + input.fileName
    }
}
#endif
