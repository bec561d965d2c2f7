import Foundation

/// What a run will do, worked out before any work starts: every input found, identical
/// sources grouped so each is fetched and decoded once, and for each listing the path of every
/// output, checked for clashes and for escapes from the output folders.
public struct RunPlan: Sendable {
    /// One source (a file by its real path, or a URL) and every listing of it in the inputs.
    public struct Item: Sendable {
        /// The source, as first listed.
        public var input: InputFile { listings[0].input }
        /// Each time the inputs name this source, with that listing's output paths.
        public let listings: [Listing]
    }

    /// One listing of a source and where its outputs go.
    public struct Listing: Sendable {
        public let input: InputFile
        /// The output paths in the order of `definition.outputs`; `{width}` and `{height}`
        /// stay unfilled until the image is processed, unless the output's steps fix them.
        /// Empty when the listing is refused.
        public let targets: [OutputTarget]
        /// Why this listing is refused before any work (a filled-in value would leave its
        /// output folder), or nil.
        public let refusal: String?
        /// The index of an earlier listing of the same source with the same output paths:
        /// this one is served by that one's work.
        public let sameAs: Int?
    }

    public let definition: PipelineDefinition
    public let items: [Item]
    /// Things worth telling the user that do not stop the run (a glob matching nothing).
    public let warnings: [String]

    /// The number of listings: what a user counts as inputs.
    public var inputCount: Int { items.reduce(0) { $0 + $1.listings.count } }

    /// Finds the inputs and resolves every output path.
    ///
    /// - Throws: `PipelineFileError` when a list file cannot be read, two outputs would write
    ///   one path, or an output would overwrite an input.
    public init(_ definition: PipelineDefinition, fileName: String) throws(PipelineFileError) {
        self.definition = definition
        let enumeration = InputEnumerator(baseDirectory: definition.baseDirectory).enumerate(definition.inputs)
        warnings = definition.warnings + enumeration.warnings

        var problems = enumeration.problems
        // A run with nothing to do is most often a glob or a folder gone wrong: an error, unless
        // the file says an empty run is expected. One pattern of several matching nothing stays a warning.
        if enumeration.files.isEmpty, !definition.allowEmpty {
            problems += enumeration.empty.map { entry in
                .init(path: "inputs[\(entry.index)]", location: nil, message:
                    "\(entry.description), and no other input names anything: a run needs inputs (\"allowEmpty\": true allows a run without)")
            }
        }
        var writers: [String: (input: String, output: String)] = [:]
        let inputPaths = Set(enumeration.files.filter { !$0.isRemote }.map(\.path))
        var listingsBySource: [String: [Listing]] = [:]
        var sourceOrder: [String] = []
        let fixedSizes = definition.outputs.map { $0.fixedSize(keepingAnimation: definition.decompress.animation == .keep) }
        for input in enumeration.files {
            let key = Self.sourceKey(input)
            var targets: [OutputTarget] = []
            var refusal: String?
            for (output, fixed) in zip(definition.outputs, fixedSizes) {
                do {
                    targets.append(try OutputTarget(output: output, input: input, baseDirectory: definition.baseDirectory, fixedSize: fixed))
                } catch {
                    refusal = "refused: output \"\(output.name)\": \(error.message)"
                    break
                }
            }
            let earlier = listingsBySource[key] ?? []
            if listingsBySource[key] == nil { sourceOrder.append(key) }
            // The same source listed again with the same output paths (a file matched by two
            // globs, a URL repeated in a list) is the same work: it is done once and reported
            // for each listing.
            if refusal == nil, let twin = earlier.firstIndex(where: { $0.refusal == nil && $0.targets.map(\.plannedPath) == targets.map(\.plannedPath) }) {
                listingsBySource[key, default: []].append(Listing(input: input, targets: [], refusal: nil, sameAs: twin))
                continue
            }
            if refusal == nil {
                for (index, target) in targets.enumerated() {
                    let output = definition.outputs[index]
                    let place = "outputs[\(index)].path"
                    // Paths still holding {width}/{height} are compared as written here, and with
                    // the other outputs of the same input below; the runner catches the rest when
                    // the sizes are known.
                    if let writer = writers[target.plannedPath] {
                        problems.append(.init(path: place, location: output.pathLocation, message:
                            "output \"\(output.name)\" of \(input.displayName) and output \"\(writer.output)\" of \(writer.input) would both write \(target.plannedPath)"))
                    } else {
                        writers[target.plannedPath] = (input.displayName, output.name)
                    }
                    if inputPaths.contains(target.plannedPath) {
                        problems.append(.init(path: place, location: output.pathLocation, message:
                            "output \"\(output.name)\" of \(input.displayName) would overwrite the input \(target.plannedPath)"))
                    }
                    // A size not known yet may turn out to be the one that makes the paths meet.
                    for (earlier, other) in targets[..<index].enumerated()
                    where other.plannedPath != target.plannedPath && (target.pattern.hasUnknowns || other.pattern.hasUnknowns)
                        && target.pattern.canMatch(other.pattern) {
                        problems.append(.init(path: place, location: output.pathLocation, message:
                            "outputs \"\(definition.outputs[earlier].name)\" and \"\(output.name)\" of \(input.displayName) could both write "
                                + "\(target.plannedPath) and \(other.plannedPath): their steps do not fix the sizes that tell them apart"))
                    }
                }
            }
            listingsBySource[key, default: []].append(Listing(input: input, targets: refusal == nil ? targets : [], refusal: refusal, sameAs: nil))
        }
        guard problems.isEmpty else { throw PipelineFileError(file: fileName, problems: problems) }
        items = sourceOrder.compactMap { listingsBySource[$0].map { Item(listings: $0) } }
    }

    /// What makes two listings one source: the URL as written, or the file's real path (so a
    /// file reached through a symbolic link or a second glob is still read once).
    static func sourceKey(_ input: InputFile) -> String {
        if let url = input.url { return "url:" + url }
        guard let resolved = realpath(input.path, nil) else { return "file:" + input.path }
        defer { free(resolved) }
        return "file:" + String(cString: resolved)
    }
}

/// Where one output of one input goes.
public struct OutputTarget: Sendable {
    public let outputName: String
    /// The folder the author wrote in the template, absolute: the path may not leave it.
    public let root: String
    /// The absolute path; `{width}` and `{height}` are left as written when the template has
    /// them and the output's steps do not fix them.
    public let plannedPath: String
    /// The planned path with its unknown sizes as unknown numbers, to find clashes.
    let pattern: PathPattern
    let template: PathTemplate
    let values: [PathTemplate.Placeholder: String]
    let baseDirectory: URL

    init(output: OutputDefinition, input: InputFile, baseDirectory: URL,
         fixedSize: (width: Int?, height: Int?) = (nil, nil)) throws(PathTemplate.Failure) {
        outputName = output.name
        template = output.path
        self.baseDirectory = baseDirectory
        var values: [PathTemplate.Placeholder: String] = [
            .stem: input.stem, .ext: input.fileExtension, .name: input.fileName, .dir: input.subfolder,
            .output: output.name, .format: output.encoder.format.fileExtension,
            .width: fixedSize.width.map(String.init) ?? "{width}", .height: fixedSize.height.map(String.init) ?? "{height}",
        ]
        self.values = values
        root = Self.absolute(output.path.authoredFolder, base: baseDirectory)
        plannedPath = try Self.place(template.resolve(values), root: root, base: baseDirectory)
        let unknown = String(PathPattern.number)
        if fixedSize.width == nil, template.placeholders.contains(.width) { values[.width] = unknown }
        if fixedSize.height == nil, template.placeholders.contains(.height) { values[.height] = unknown }
        pattern = values == self.values ? PathPattern(plannedPath)
            : PathPattern(try Self.place(template.resolve(values), root: root, base: baseDirectory))
    }

    /// The final path once the encoded image's size is known.
    func path(width: Int, height: Int) throws(PathTemplate.Failure) -> String {
        guard template.placeholders.contains(.width) || template.placeholders.contains(.height) else { return plannedPath }
        var filled = values
        filled[.width] = String(width)
        filled[.height] = String(height)
        return try Self.place(template.resolve(filled), root: root, base: baseDirectory)
    }

    private static func place(_ resolved: String, root: String, base: URL) throws(PathTemplate.Failure) -> String {
        let path = absolute(resolved, base: base)
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else {
            throw PathTemplate.Failure(message: "the path \(path) would leave the output folder \(root)")
        }
        return path
    }

    private static func absolute(_ path: String, base: URL) -> String {
        if path.hasPrefix("/") { return InputEnumerator.normalize(path) }
        return InputEnumerator.normalize(base.path + "/" + path)
    }
}
