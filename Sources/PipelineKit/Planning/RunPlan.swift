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
        public internal(set) var listings: [Listing]
    }

    /// One listing of a source and where its outputs go.
    public struct Listing: Sendable {
        /// The input as this listing names it.
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

    /// The checked pipeline file the plan is for.
    public let definition: PipelineDefinition
    /// The sources this run makes: all of them, or this shard's. They are kept in a file and
    /// read back one at a time, so that a plan holds a few bytes for each.
    public private(set) var items: SourceList
    /// The part of the inputs this run makes, or nil for all of them.
    public let shard: Shard?
    /// Listings in all shards together.
    public let totalInputCount: Int
    /// Things worth telling the user that do not stop the run (a glob matching nothing, a
    /// damaged journal, a cache folder that cannot be written).
    public private(set) var warnings: [String]

    /// The local inputs by identity, which no commit may rename over.
    let protectedInputs: ProtectedInputs
    /// The local files the plan writes, for a run of a pipeline file to claim (nil for a
    /// definition that is not read from a file).
    let outputPaths: OutputPathRecords?
    /// Whether some output path has a `{width}` or `{height}` that only the made image fills:
    /// then two outputs may meet on one path that planning could not compare.
    let somePathsWaitForSizes: Bool

    /// The number of listings: what a user counts as inputs.
    public var inputCount: Int { items.listingCount }

    /// Finds the inputs and resolves every output path.
    ///
    /// - Throws: `PipelineFileError` when a list file cannot be read, two outputs would write
    ///   one path, or anything the run writes (an output, the manifest, the journal, a
    ///   `sideWrites` file) would overwrite an input or another write, by real identity.
    ///
    /// With a `shard`, every input is still found and every output path checked (a clash
    /// between two shards is a clash), and then only the shard's sources are kept.
    public init(_ definition: PipelineDefinition, fileName: String, shard: Shard? = nil, sideWrites: [SideWrite] = [])
        throws(PipelineFileError)
    {
        try self.init(
            definition, fileName: fileName, shard: shard,
            s3: S3Access(definition: definition, environment: ProcessInfo.processInfo.environment, loader: nil),
            sideWrites: sideWrites)
    }

    /// S3 for this plan's listings and for the run that follows it.
    let s3: S3Access

    init(_ definition: PipelineDefinition, fileName: String, shard: Shard?, s3: S3Access, sideWrites: [SideWrite] = [])
        throws(PipelineFileError)
    {
        self.definition = definition
        self.shard = shard
        self.s3 = s3
        var problems: [PipelineFileError.Problem] = []
        let outputs = definition.outputs.map { output in
            OutputTarget.Output(
                output, baseDirectory: definition.baseDirectory,
                fixedSize: output.variant.map { (width: $0.width, height: Int?.none) } ?? output.fixedSize())
        }
        let outputWriters = OutputPathCheck.writers(of: definition.outputs, roots: outputs.map(\.root))
        let store: SourceStore.Builder
        do {
            store = try SourceStore.Builder()
        } catch {
            throw PipelineFileError(file: fileName, problems: [SourceStore.unkeptProblem(error)])
        }
        // Each input is planned as it is found: no list of them all is kept.
        let enumeration = InputEnumerator(
            baseDirectory: definition.baseDirectory, s3: s3, redaction: definition.fetch.redaction,
            caseInsensitive: definition.caseInsensitive
        )
        .enumerate(
            definition.inputs,
            into: ListingPlanner(
                definition: definition, outputs: outputs, outputWriters: outputWriters, shard: shard, store: store,
                writeCheck: WriteCheck(
                    cacheFolder: definition.cache.enabled || definition.incremental ? definition.cache.directory.path : nil)))
        warnings = definition.warnings + enumeration.warnings
        problems = enumeration.problems + Self.emptyRunProblems(enumeration, definition: definition)
        let planned = enumeration.sink.finish()
        problems += planned.problems
        WorkCounter.add(.plannedPathPairs, planned.pairsCompared)

        let sources = planned.sources
        // Only a run of a pipeline file claims its outputs against runs of other files.
        var records = definition.sourceFile == nil ? nil : OutputPathRecords.Builder()
        let checked = Self.checkWrites(
            planned, reads: Self.readFiles(definition, fileName: fileName, listFiles: enumeration.listFiles, s3: s3),
            runWrites: Self.runWrites(definition, shard: shard, sideWrites: sideWrites), outputWriters: outputWriters,
            records: &records)
        problems += checked.problems
        protectedInputs = checked.protected
        outputPaths = records?.finish()
        guard problems.isEmpty else { throw PipelineFileError(file: fileName, problems: problems) }

        somePathsWaitForSizes = planned.somePathsWaitForSizes
        totalInputCount = sources.listingCount
        items = shard == nil ? sources : sources.filter(refs: \.inShard)
    }

    /// What the run writes (the outputs `planned`, then `runWrites`) compared with what it reads
    /// (its inputs and `reads`), by real identity: each source is read back from the plan's file,
    /// one at a time.
    private static func checkWrites(
        _ planned: ListingPlanner.Planned, reads: [ReadFile], runWrites: [WriteCheck.Write], outputWriters: [WriteCheck.Write.Writer],
        records: inout OutputPathRecords.Builder?
    ) -> (problems: [PipelineFileError.Problem], protected: ProtectedInputs) {
        let sources = planned.sources
        let store = sources.store
        let outputWrites = sources.refs.lazy.flatMap { ref in
            zip(store.listingOffsets(of: ref), store.item(ref).listings).flatMap { offset, listing in
                listing.refusal != nil || listing.sameAs != nil
                    ? []
                    : listing.targets.enumerated().map { index, target in
                        (
                            write: WriteCheck.Write(outputWriters[index], input: listing.input.displayName, path: target.plannedPath),
                            origin: WriteCheck.Origin.output(listing: offset, index: index)
                        )
                    }
            }
        }
        let otherWrites = runWrites.enumerated().map { (write: $1, origin: WriteCheck.Origin.run(index: $0)) }
        return planned.writeCheck.check(
            inputAt: { planned.sourceIndex[$0].map { sources.refs[$0].offset } }, reads: reads,
            writes: [AnySequence(outputWrites), AnySequence(otherWrites)].joined(),
            remake: { origin in
                switch origin {
                case .output(let listing, let index):
                    guard let listing = store.listing(at: listing), listing.targets.indices.contains(index) else { return nil }
                    return WriteCheck.Write(
                        outputWriters[index], input: listing.input.displayName, path: listing.targets[index].plannedPath)
                case .run(let index):
                    return runWrites[index]
                }
            }, plan: store.reader, records: &records)
    }

    /// A run with nothing to do is most often a glob or a folder gone wrong: an error, unless
    /// the file says an empty run is expected. One pattern of several matching nothing stays a warning.
    private static func emptyRunProblems(_ enumeration: InputEnumerator.Result<some InputSink>, definition: PipelineDefinition)
        -> [PipelineFileError.Problem]
    {
        guard enumeration.count == 0, !definition.allowEmpty else { return [] }
        return enumeration.empty.map { entry in
            .init(
                path: "inputs[\(entry.index)]", location: nil,
                message:
                    "\(entry.description), and no other input names anything: a run needs inputs (\"allowEmpty\": true allows a run without)"
            )
        }
    }

    /// What the run writes besides its outputs: the manifest, the journal, and `sideWrites`.
    private static func runWrites(_ definition: PipelineDefinition, shard: Shard?, sideWrites: [SideWrite]) -> [WriteCheck.Write] {
        var writes: [WriteCheck.Write] = []
        if let manifest = definition.manifest?.forShard(shard) {
            writes.append(.init(place: "manifest.path", location: nil, what: "the manifest", path: manifest.file.path, root: nil))
        }
        if definition.incremental {
            let journal = definition.cache.journalFile(pipeline: definition.name, baseDirectory: definition.baseDirectory)
            writes.append(.init(place: "cache", location: nil, what: "the journal", path: journal.path, root: nil))
        }
        return writes + sideWrites.map { .init(place: "", location: nil, what: $0.what, path: $0.path, root: nil) }
    }

    /// `path` with every link in it followed, or as written when it does not all exist.
    static func realPath(_ path: String) -> String {
        WriteCheck.realPath(path) ?? path
    }

    /// This plan with only the sources `isIncluded` keeps, for a run of a few of them (a server
    /// making the one input a request names); every path was checked with all of them.
    public func keeping(_ isIncluded: (Item) -> Bool) -> RunPlan {
        keeping(sourcesAt: items.indices.filter { isIncluded(items[$0]) })
    }

    /// This plan with only the sources at `positions` in `items`, for a run of a few of them.
    package func keeping(sourcesAt positions: some Sequence<Int>) -> RunPlan {
        var plan = self
        plan.items = items.picking(positions)
        plan.isPart = true
        return plan
    }

    /// Whether this plan keeps only some of the sources planned (`keeping(_:)`): its run's
    /// manifest updates their entries and keeps the others'.
    private(set) var isPart = false

    /// This plan with `more` warnings, said when the run starts.
    func adding(warnings more: [String]) -> RunPlan {
        var plan = self
        plan.warnings += more
        return plan
    }

    /// What makes two listings one source: the URL as written, or the file's real path byte for
    /// byte (so a file reached through a symbolic link or a second glob is still read once, and
    /// two names that differ only in how their accents are encoded stay two files).
    enum SourceKey: Hashable {
        case url(String)
        case file(DiskPath)

        /// The key as text, for its digest: a URL, or a real path, which starts with `/` as no
        /// URL does. A path written is compared with the local sources by the same digest.
        var text: String {
            switch self {
            case .url(let url): return url
            case .file(let real): return real.path
            }
        }

        init(_ input: InputFile) {
            if let url = input.url {
                self = .url(url)
            } else {
                // Sharing the listed path's storage when it is already real: a plan holds a key
                // for every source.
                self = .file(DiskPath(sharing: input.path, orElse: RunPlan.realPath(input.path)))
            }
        }

        /// What decides the source's shard: its URL, or its real path relative to the pipeline
        /// file's real folder `base` when inside it, so that machines that mount the storage
        /// elsewhere agree.
        func shardKey(base: String) -> String {
            switch self {
            case .url(let url): return "url:" + url
            case .file(let real):
                return real.path.hasPrefix(base + "/") ? "file:" + real.path.dropFirst(base.count + 1) : "file:" + real.path
            }
        }
    }
}

/// Where one output of one input goes.
public struct OutputTarget: Sendable {
    /// What the targets of one output share, made once for all the inputs: a plan holds a
    /// target for every output of every input, so each keeps only its own path.
    final class Output: Sendable {
        let name: String
        /// The folder the author wrote in the template, absolute.
        let root: String
        let template: PathTemplate
        let baseDirectory: URL
        let formatExtension: String
        /// The width and height the output's steps (or its width of `widths`) fix, if any.
        let fixedWidth: Int?
        let fixedHeight: Int?
        /// Whether the template has a `{width}` or `{height}`.
        let namesSizes: Bool

        init(_ output: OutputDefinition, baseDirectory: URL, fixedSize: (width: Int?, height: Int?) = (nil, nil)) {
            name = output.name
            root = OutputTarget.root(of: output, baseDirectory: baseDirectory)
            template = output.path
            self.baseDirectory = baseDirectory
            formatExtension = output.encoder.format.fileExtension
            fixedWidth = fixedSize.width
            fixedHeight = fixedSize.height
            namesSizes = !output.path.placeholders.isDisjoint(with: [.width, .height])
        }
    }

    /// What a path whose template has `{width}` or `{height}` keeps to be filled once the image
    /// is made; the other paths are final when planned and keep nothing more.
    private final class Sizes: Sendable {
        /// The values the template was filled with.
        let values: [PathTemplate.Placeholder: String]
        /// The planned path with its unknown sizes as unknown numbers, when some are unknown.
        let unknownPattern: PathPattern?

        init(values: [PathTemplate.Placeholder: String], unknownPattern: PathPattern?) {
            self.values = values
            self.unknownPattern = unknownPattern
        }
    }

    private let output: Output
    /// The absolute path; `{width}` and `{height}` are left as written when the template has
    /// them and the output's steps do not fix them.
    public let plannedPath: String
    private let sizes: Sizes?

    /// The output's name.
    public var outputName: String { output.name }
    /// The folder the author wrote in the template, absolute: the path may not leave it.
    public var root: String { output.root }
    /// Whether the planned path still holds a `{width}` or `{height}` that only the made image fills.
    var hasUnknownSizes: Bool { sizes?.unknownPattern != nil }

    /// The values an input gives every output's template (`{stem}`, `{ext}`, `{name}`, `{dir}`):
    /// made once per input, not once per output.
    static func values(of input: InputFile) -> [PathTemplate.Placeholder: String] {
        [.stem: input.stem, .ext: input.fileExtension, .name: input.fileName, .dir: input.subfolder]
    }

    /// The target of `output` for the input whose values (`values(of:)`) are `inputValues`.
    init(_ output: Output, inputValues: [PathTemplate.Placeholder: String]) throws(PathTemplate.Failure) {
        self.output = output
        let template = output.template
        let placeholders = template.placeholders
        var values = inputValues
        values[.output] = output.name
        values[.format] = output.formatExtension
        values[.width] = output.fixedWidth.map(String.init) ?? "{width}"
        values[.height] = output.fixedHeight.map(String.init) ?? "{height}"
        plannedPath = try Self.place(template.resolve(values), root: output.root, base: output.baseDirectory)
        try Self.checkLengths(of: plannedPath, root: output.root)
        guard placeholders.contains(.width) || placeholders.contains(.height) else {
            sizes = nil
            return
        }
        var unknown = values
        if output.fixedWidth == nil, placeholders.contains(.width) { unknown[.width] = String(PathPattern.number) }
        if output.fixedHeight == nil, placeholders.contains(.height) { unknown[.height] = String(PathPattern.number) }
        sizes = Sizes(
            values: values,
            unknownPattern: unknown == values
                ? nil : PathPattern(try Self.place(template.resolve(unknown), root: output.root, base: output.baseDirectory)))
    }

    /// The target of `output` for `input` whose path was planned as `plannedPath`: made again
    /// only when the template waits for sizes, whose values it keeps.
    init(_ output: Output, plannedPath: String, input: InputFile) throws(PathTemplate.Failure) {
        if output.namesSizes {
            try self.init(output, inputValues: Self.values(of: input))
        } else {
            self.init(output: output, plannedPath: plannedPath, sizes: nil)
        }
    }

    private init(output: Output, plannedPath: String, sizes: Sizes?) {
        self.output = output
        self.plannedPath = plannedPath
        self.sizes = sizes
    }

    /// The folder `output`'s template names, absolute: its paths may not leave it.
    static func root(of output: OutputDefinition, baseDirectory: URL) -> String {
        absolute(output.path.authoredFolder, base: baseDirectory)
    }

    /// The planned path with its unknown sizes as unknown numbers, to find clashes.
    var pattern: PathPattern { sizes?.unknownPattern ?? PathPattern(plannedPath) }

    /// Whether the output is an object in S3 (`s3://bucket/key`), not a file.
    public var isS3: Bool { S3Location.isS3(root) }

    /// The final path once the encoded image's size is known.
    func path(width: Int, height: Int) throws(PathTemplate.Failure) -> String {
        guard var filled = sizes?.values else { return plannedPath }
        filled[.width] = String(width)
        filled[.height] = String(height)
        return try Self.place(output.template.resolve(filled), root: root, base: output.baseDirectory)
    }

    /// The longest name a folder or file may have, and the longest path, in bytes (Linux's
    /// NAME_MAX and PATH_MAX; most file systems take no more).
    static let maxNameBytes = 255
    static let maxPathBytes = 4095

    /// Refuses a path the file system would refuse at the rename, after the decode and encode:
    /// a name below the output folder longer than 255 bytes, or a path longer than 4095. An
    /// unknown `{width}` or `{height}` counts as one digit.
    private static func checkLengths(of path: String, root: String) throws(PathTemplate.Failure) {
        // Most paths hold no unknown size: searching each for one would cost every output of every input.
        let shortest =
            path.utf8.contains(UInt8(ascii: "{"))
            ? path.replacingOccurrences(of: "{width}", with: "0").replacingOccurrences(of: "{height}", with: "0") : path
        if let object = S3Location(shortest) {
            // S3's own limit on a key; names within it are not limited.
            guard object.key.utf8.count <= 1024 else {
                throw PathTemplate.Failure(
                    message: "the key of \(path) would be \(object.key.utf8.count) bytes long: more than the 1024 S3 allows")
            }
            return
        }
        if shortest.utf8.count > maxPathBytes {
            throw PathTemplate.Failure(
                message: "the path \(path) would be \(shortest.utf8.count) bytes long: "
                    + "more than the \(maxPathBytes) a path may have")
        }
        for name in shortest.dropFirst(root.count).split(separator: "/") where name.utf8.count > maxNameBytes {
            throw PathTemplate.Failure(
                message: "the name \"\(name)\" in \(path) would be \(name.utf8.count) bytes long: "
                    + "more than the \(maxNameBytes) a file or folder name may have")
        }
    }

    private static func place(_ resolved: String, root: String, base: URL) throws(PathTemplate.Failure) -> String {
        if S3Location.isS3(root) { return try placeObject(resolved, root: root) }
        let path = absolute(resolved, base: base)
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else {
            throw PathTemplate.Failure(message: "the path \(path) would leave the output folder \(root)")
        }
        return path
    }

    /// An S3 key is not a path: nothing resolves `..` in it, so a key with a `.` or `..` part is
    /// refused (whoever later copies the objects to a disk would resolve them), as is one outside
    /// the template's bucket and literal folders. Empty parts (an empty `{dir}`) fold, as `//`
    /// does in a file path.
    private static func placeObject(_ resolved: String, root: String) throws(PathTemplate.Failure) -> String {
        guard let written = S3Location(resolved), let rootObject = S3Location(root), written.bucket == rootObject.bucket,
            !rootObject.bucket.contains("{")
        else {
            throw PathTemplate.Failure(
                message: "\(resolved) would leave the output prefix \(root): an S3 output's bucket must be written in full")
        }
        let object = S3Location(bucket: written.bucket, key: written.key.split(separator: "/").joined(separator: "/"))
        let parts = object.key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let prefix = rootObject.key.isEmpty ? "" : rootObject.key + "/"
        guard !parts.contains(where: { $0.isEmpty || $0.elementsEqual([0x2E]) || $0.elementsEqual([0x2E, 0x2E]) }),
            !object.key.utf8.contains(0), object.key.hasPrefix(prefix), object.key.count > prefix.count
        else {
            throw PathTemplate.Failure(
                message: "the key of \(resolved) has a \".\" or \"..\" part or lies outside \(root): "
                    + "it would leave the output prefix \(root)")
        }
        return object.description
    }

    private static func absolute(_ path: String, base: URL) -> String {
        if S3Location.isS3(path) { return path }
        if path.hasPrefix("/") { return InputEnumerator.normalize(path) }
        return InputEnumerator.normalize(base.path + "/" + path)
    }
}
