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
        /// The outputs whose paths cannot be made for this input (a file name too long), by
        /// their index in `targets`, where they are not made: the listing's other outputs are,
        /// and these are reported failed. When no output is left to make, the listing is
        /// refused as a whole instead.
        public internal(set) var refusedOutputs: [RefusedOutput] = []
    }

    /// One output of a listing refused before any work (see `Listing.refusedOutputs`).
    public struct RefusedOutput: Sendable {
        /// The output's index in the plan's `definition.outputs`.
        public let index: Int
        /// Why the output's path cannot be made (its failure names the output).
        public let reason: String

        /// The reason as the output's failure gives it.
        public var failureReason: String { "refused: \(reason)" }
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
    /// Of a shard's plan, what every shard of its run has in common (`RunBatch`); nil unsharded.
    public let batch: RunBatch?
    /// Things worth telling the user that do not stop the run (a glob matching nothing, a
    /// damaged journal, a cache folder that cannot be written).
    public private(set) var warnings: [String]
    /// The folders among those warnings that outputs would be written in and this process may
    /// not write in: for `pipeline convert`, which makes every file, to refuse before it runs.
    package private(set) var unwritableFolders: [UnwritableFolder] = []

    /// The local inputs by identity, which no commit may rename over.
    let protectedInputs: ProtectedInputs
    /// The local files the plan writes, for a run of a pipeline file to claim (nil for a
    /// definition that is not read from a file).
    let outputPaths: OutputPathRecords?
    /// Whether some output path has a `{width}` or `{height}` that only the made image fills:
    /// then two outputs may meet on one path that planning could not compare.
    let somePathsWaitForSizes: Bool
    /// Other inputs' planned files that a file made at another size than planned may reach.
    let sizedPathReach: SizedPathReach

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
            stores: ObjectStoreAccess(definition: definition, environment: ProcessInfo.processInfo.environment, loader: nil),
            sideWrites: sideWrites)
    }

    /// The object stores for this plan's listings and for the run that follows it.
    let stores: ObjectStoreAccess

    init(
        _ definition: PipelineDefinition, fileName: String, shard: Shard?, stores: ObjectStoreAccess, sideWrites: [SideWrite] = [],
        claims: Bool = false, allowingNoInputs: Bool = false
    )
        throws(PipelineFileError)
    {
        self.definition = definition
        self.shard = shard
        self.stores = stores
        var problems: [PipelineFileError.Problem] = []
        let outputs = definition.outputs.map { output in
            OutputTarget.Output(
                output, baseDirectory: definition.baseDirectory, caseInsensitive: definition.caseInsensitive,
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
            baseDirectory: definition.baseDirectory, stores: stores, redaction: definition.fetch.redaction,
            caseInsensitive: definition.caseInsensitive
        )
        .enumerate(
            definition.inputs,
            into: ListingPlanner(
                definition: definition, outputs: outputs, outputWriters: outputWriters, shard: shard, store: store,
                writeCheck: WriteCheck(
                    cacheFolder: definition.cache.enabled || definition.incremental ? definition.cache.directory.path : nil,
                    reach: InputReach(definition: definition))), locatedBy: definition.inputLocation)
        warnings = definition.warnings + enumeration.warnings
        problems =
            enumeration.problems
            + Self.emptyRunProblems(enumeration, allowed: definition.allowEmpty || allowingNoInputs, definition: definition)
        var planned = enumeration.sink.finish()
        planned.writeCheck.note(enumeration.linkedFolders)
        planned.sizedPathReach.lookAgain(at: planned.sources)
        problems += planned.problems
        warnings += planned.warnings
        unwritableFolders = planned.unwritableFolders
        WorkCounter.add(.plannedPathPairs, planned.pairsCompared)

        let sources = planned.sources
        // Only a run that claims its outputs (`Pipeline.claimant`) needs their paths kept.
        var records = claims ? OutputPathRecords.Builder() : nil
        let runWrites = Self.runWrites(definition, shard: shard, sideWrites: sideWrites)
        let checked = Self.checkWrites(
            planned, reads: Self.readFiles(definition, fileName: fileName, listFiles: enumeration.listFiles, stores: stores),
            runWrites: runWrites, outputWriters: outputWriters, records: &records)
        problems += checked.problems + Self.misplacedWrites(runWrites) + Self.outputBucketProblems(definition, stores: stores)
        protectedInputs = checked.protected
        outputPaths = records?.finish()
        guard problems.isEmpty else { throw PipelineFileError(file: fileName, problems: problems) }

        somePathsWaitForSizes = planned.somePathsWaitForSizes
        sizedPathReach = planned.sizedPathReach
        totalInputCount = sources.listingCount
        batch = shard.map { _ in RunBatch(definition: definition, sources: sources) }
        items = shard == nil ? sources : sources.filter(refs: \.inShard)
    }

    /// What follows an input entry's "matches no files" when no input names anything: a
    /// command without a pipeline file (`convert`) cuts it off, its `allowEmpty` being no option.
    package static let emptyRunExplanation =
        ", and no other input names anything: a run needs inputs (\"allowEmpty\": true allows a run without)"

    /// A run with nothing to do is most often a glob or a folder gone wrong: an error, unless
    /// the file says an empty run is expected. One pattern of several matching nothing stays a warning.
    private static func emptyRunProblems(
        _ enumeration: InputEnumerator.Result<some InputSink>, allowed: Bool, definition: PipelineDefinition
    ) -> [PipelineFileError.Problem] {
        guard enumeration.count == 0, !allowed else { return [] }
        return enumeration.empty.map { entry in
            .init(
                path: "inputs[\(entry.index)]", location: definition.inputLocation(entry.index),
                message: entry.description + emptyRunExplanation)
        }
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

    /// The one file of each source this plan makes (`keeping(sourcesAt:wanted:)`), or nil to
    /// make every output: other outputs are reported when up to date, and left unmade otherwise.
    package internal(set) var wantedFile: WantedFile?

    /// This plan with `more` warnings, said when the run starts.
    func adding(warnings more: [String]) -> RunPlan {
        var plan = self
        plan.warnings += more
        return plan
    }

    /// What makes two listings one source: the URL as written but for the case of its scheme and
    /// host, which name the same server in any case (`HTTP://Example.com/a.jpg` is
    /// `http://example.com/a.jpg`), or the file's real path byte for byte (so a file reached
    /// through a symbolic link or a second glob is still read once, and two names that differ
    /// only in how their accents are encoded stay two files).
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
                self = .url(Self.caseless(url))
            } else {
                // Sharing the listed path's storage when it is already real: a plan holds a key
                // for every source.
                self = .file(DiskPath(sharing: input.path, orElse: RunPlan.realPath(input.path)))
            }
        }

        /// `url` with its scheme and host in lower case; its user, path and query as written,
        /// since those may differ by case alone.
        static func caseless(_ url: String) -> String {
            guard let schemeEnd = url.range(of: "://") else { return url }
            let authorityEnd = url[schemeEnd.upperBound...].firstIndex { "/?#".contains($0) } ?? url.endIndex
            let hostStart = url[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@").map(url.index(after:)) ?? schemeEnd.upperBound
            return url[..<schemeEnd.lowerBound].lowercased() + url[schemeEnd.lowerBound..<hostStart]
                + url[hostStart..<authorityEnd].lowercased() + url[authorityEnd...]
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

extension RunPlan {
    /// The outputs, by index, made for a source through any of its `listings` (an output's
    /// `inputs` may leave it out, and a path too long to make refuses one); nil when all are.
    static func outputsMade(for listings: [Listing], outputCount: Int) -> Set<Int>? {
        var made = Set<Int>()
        for listing in listings {
            for (index, target) in listing.targets.enumerated() where target.isMade { made.insert(index) }
        }
        return made.count == outputCount ? nil : made
    }
}

extension RunPlan {
    /// One line for each input and each output of an input that the run would refuse before
    /// any work, as the run names them (`in/a.jpg → small: refused: …`): what `validate` and
    /// `explain` say a run would fail.
    public var refusals: [String] {
        items.flatMap { item in
            item.listings.flatMap { listing in
                let name = listing.input.displayName
                return listing.refusal.map { ["\(name): \($0)"] }
                    ?? listing.refusedOutputs.map { "\(name) → \(listing.targets[$0.index].outputDescription): \($0.failureReason)" }
            }
        }
    }
}
