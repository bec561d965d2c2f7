import Foundation

extension RunPlan {
    /// Plans the listings of a run's inputs, source by source in the order first found: each
    /// listing with its output paths, or why it is refused, or the earlier listing it repeats.
    /// Each listing's input goes to the plan's file as it is planned; what stays in memory is a
    /// digest of each path that must be told apart from the others.
    struct ListingPlanner: InputSink {
        /// Each output's part of its targets, made once for all the inputs. A width of `widths`
        /// names its file in the plan (and the journal) even when the image turns out narrower:
        /// the file itself is named by the width it has.
        private let outputs: [OutputTarget.Output]
        private var store: SourceStore.Builder
        /// The sources planned, in the order first found.
        private var refs: [SourceRef] = []
        /// Each source's position in `refs`, by the digest of its key (`SourceKey.text`: a
        /// local file's real path, a URL as written).
        private var sourceIndex: [PathDigest: Int] = [:]
        /// Every planned path checked against the others and against the disk.
        private var paths: OutputPathCheck
        /// The local sources, for the check of what the run writes against what it reads.
        private var writeCheck: WriteCheck
        /// Whether a planned path still holds a `{width}` or `{height}`.
        private var somePathsWaitForSizes = false
        private let shard: Shard?
        /// The pipeline file's real folder, which shard keys are relative to.
        private let shardBase: String
        /// Why a listing could not be kept in the plan's file, once one could not.
        private var storeFailure: ReportWriterError?
        /// For a source listed more than once, by the offset of its first listing: the positions
        /// among its listings of those with work of their own (not refused, no earlier twin),
        /// which alone a later listing may repeat. Without it each listing of a source listed
        /// thousands of times would read every earlier one back.
        private var ownWork: [Int64: [Int]] = [:]
        /// The outputs that choose their inputs, by index, until an input of theirs is found.
        private var subsetsUnmatched: Set<Int>
        private let definitions: [OutputDefinition]
        /// The keys of the `focusPoints` file that no input has matched yet.
        private var focusPointsUnmatched: Set<String>
        private let focusPoints: FocusPoints?

        init(
            definition: PipelineDefinition, outputs: [OutputTarget.Output], outputWriters: [WriteCheck.Write.Writer],
            shard: Shard?, store: SourceStore.Builder, writeCheck: WriteCheck
        ) {
            self.outputs = outputs
            self.store = store
            self.writeCheck = writeCheck
            self.shard = shard
            shardBase = shard == nil ? "" : RunPlan.realPath(definition.baseDirectory.path)
            paths = OutputPathCheck(outputs: definition.outputs, outputWriters: outputWriters)
            definitions = definition.outputs
            subsetsUnmatched = Set(definition.outputs.indices.filter { definition.outputs[$0].inputSubset != nil })
            focusPoints = definition.focusPoints
            focusPointsUnmatched = definition.focusPoints?.keys ?? []
        }

        /// Plans one listing of `input`.
        mutating func add(_ input: InputFile) {
            guard storeFailure == nil else { return }
            if !subsetsUnmatched.isEmpty {
                subsetsUnmatched = subsetsUnmatched.filter { !OutputTarget.applies(outputs[$0], to: input) }
            }
            if !focusPointsUnmatched.isEmpty { focusPointsUnmatched.remove(input.path) }
            let key = SourceKey(input)
            let digest = PathDigest(key.text)
            do {
                if let index = sourceIndex[digest] {
                    try addRepeat(input, ofSourceAt: refs[index].offset)
                    return
                }
                let listing = Self.listing(of: input, after: [], outputs: outputs)
                let offset = try store.append(listing)
                // Known as an input before its own outputs are checked: an S3 output may not
                // replace the object it is made from.
                sourceIndex[digest] = refs.count
                if input.objectLocation != nil { paths.check(storedInput: input, digest: digest, naming: naming) }
                check(listing, at: offset)
                if case .file(let real) = key { writeCheck.note(input, real: real, at: offset) }
                refs.append(
                    SourceRef(
                        offset: offset, byteCount: input.byteCount ?? -1, isRemote: input.isRemote,
                        inShard: shard.map { $0.contains(key: key.shardKey(base: shardBase)) } ?? true))
            } catch {
                storeFailure = error
            }
        }

        /// Plans a listing of a source listed before, whose first listing is at `first`: the
        /// same source with the same output paths is served by the earlier listing's work. The
        /// earlier listings are read back as planned, not planned again.
        private mutating func addRepeat(_ input: InputFile, ofSourceAt first: Int64) throws(ReportWriterError) {
            let offsets = [first] + store.laterListings(of: first)
            // The first listing is read even when it has no work of its own: it is one read.
            let positions = ownWork[first] ?? [0]
            let earlier = positions.compactMap { store.listing(at: offsets[$0], outputs: outputs) }
            guard earlier.count == positions.count else {
                throw ReportWriterError(path: "the plan of the inputs", reason: "cannot read it back")
            }
            var listing = Self.listing(of: input, after: earlier, outputs: outputs)
            if let twin = listing.sameAs {
                listing = Listing(input: input, targets: [], refusal: nil, sameAs: positions[twin])
            } else if listing.refusal == nil {
                ownWork[first] = positions + [offsets.count]
            }
            check(listing, at: try store.append(listing, after: first))
        }

        /// Checks the paths of a listing that has work of its own, whose record is at `offset`.
        private mutating func check(_ listing: Listing, at offset: Int64) {
            guard listing.refusal == nil, listing.sameAs == nil else { return }
            let sources = sourceIndex
            paths.check(listing.targets, of: listing.input, at: offset, naming: naming) { sources[$0] != nil }
            if !somePathsWaitForSizes { somePathsWaitForSizes = listing.targets.contains(where: \.hasUnknownSizes) }
        }

        /// Names the input whose record is at an offset, for a problem. It holds the reader
        /// alone: a closure holding the planner would make each check copy the planner's tables.
        private var naming: (Int64) -> String? {
            { [reader = store.reader] in SourceStore.input(at: $0, in: reader)?.displayName }
        }

        /// What planning found, for the checks that follow.
        struct Planned {
            /// Every source planned, in the order first found, read from the plan's file.
            var sources: SourceList
            /// Each source's position in `sources`, by the digest of its key.
            var sourceIndex: [PathDigest: Int]
            var writeCheck: WriteCheck
            var problems: [PipelineFileError.Problem]
            var pairsCompared: Int
            var somePathsWaitForSizes: Bool
            var warnings: [String]
        }

        /// What was planned, taken out: the table of output paths is let go here, before the
        /// write check builds its own beside the plan.
        consuming func finish() -> Planned {
            var problems = paths.problems
            if let storeFailure { problems.append(SourceStore.unkeptProblem(storeFailure)) }
            if !refs.isEmpty { problems += InputSubset.unmatchedProblems(subsetsUnmatched, of: definitions) }
            return Planned(
                sources: SourceList(store: store.finish(outputs: outputs), refs: refs), sourceIndex: sourceIndex,
                writeCheck: writeCheck, problems: problems,
                pairsCompared: paths.pairsCompared, somePathsWaitForSizes: somePathsWaitForSizes,
                warnings: paths.warnings + (focusPoints?.unmatchedWarning(focusPointsUnmatched).map { [$0] } ?? []))
        }

        /// The listing of `input` after the `earlier` listings of the same source: with its
        /// targets, refused, or served by an earlier listing with the same output paths (a file
        /// matched by two globs, a URL repeated in a list), whose work is done once and reported
        /// for each.
        static func listing(of input: InputFile, after earlier: [Listing], outputs: [OutputTarget.Output]) -> Listing {
            let planned = targets(for: input, outputs: outputs)
            guard let targets = planned.targets else {
                return Listing(input: input, targets: [], refusal: planned.refusal, sameAs: nil)
            }
            let paths = targets.map(\.plannedPath)
            if let twin = earlier.firstIndex(where: { $0.refusal == nil && $0.sameAs == nil && $0.targets.map(\.plannedPath) == paths }) {
                return Listing(input: input, targets: [], refusal: nil, sameAs: twin)
            }
            return Listing(input: input, targets: targets, refusal: nil, sameAs: nil, refusedOutputs: planned.refusedOutputs)
        }

        /// Every output's target for `input`, the outputs whose paths cannot be made among them
        /// as not made (`refusedOutputs`); or why the listing is refused as a whole: its own path,
        /// or every output it would make refused (the first one's reason).
        static func targets(for input: InputFile, outputs: [OutputTarget.Output])
            -> (targets: [OutputTarget]?, refusal: String?, refusedOutputs: [RefusedOutput])
        {
            if input.url == nil, let refusal = LongPath.refusal(of: input.path) { return (nil, refusal, []) }
            var targets: [OutputTarget] = []
            var refused: [RefusedOutput] = []
            targets.reserveCapacity(outputs.count)
            let values = OutputTarget.values(of: input)
            for (index, output) in outputs.enumerated() {
                guard OutputTarget.applies(output, to: input) else {
                    targets.append(.notMade(output))
                    continue
                }
                do {
                    targets.append(try OutputTarget(output, inputValues: values))
                } catch {
                    refused.append(RefusedOutput(index: index, reason: error.message))
                    targets.append(.notMade(output))
                }
            }
            if let first = refused.first, !targets.contains(where: \.isMade) {
                return (nil, "refused: output \"\(outputs[first.index].name)\": \(first.reason)", [])
            }
            return (targets, nil, refused)
        }
    }
}

/// Checks each planned output path as the listings are planned (two outputs writing one path, a
/// file where a folder must be, an S3 output over its own input, paths that may meet once sizes
/// are known), and warns of folders the run may not write in. It keeps a digest of each path
/// and where its listing's record is, and reads the earlier listing back only to name it in a
/// problem.
struct OutputPathCheck {
    private let outputs: [OutputDefinition]
    /// Each planned path, by its bytes, and what writes it: the record of its listing and the
    /// output's index.
    private var writers: [PathDigest: (listing: Int64, output: Int)] = [:]
    private var folders = FolderCheck()
    private(set) var problems: [PipelineFileError.Problem] = []
    /// Folders the run may not write in: a warning, not a problem, as files already made there
    /// (a read-only volume a server answers from) need no writing.
    private(set) var warnings: [String] = []
    /// Each output's writer of files.
    private let outputWriters: [WriteCheck.Write.Writer]
    /// Paths compared for a clash of sizes not known yet: kept here, and counted by the plan
    /// (`WorkCounter`) once, so that the counting stays out of the comparing.
    private(set) var pairsCompared = 0

    init(outputs: [OutputDefinition], outputWriters: [WriteCheck.Write.Writer]) {
        self.outputs = outputs
        self.outputWriters = outputWriters
    }

    /// Each output's writer of files: what writes them and where the pipeline file sets it.
    static func writers(of outputs: [OutputDefinition], roots: [String]) -> [WriteCheck.Write.Writer] {
        outputs.enumerated().map { index, output in
            // Where the pipeline file sets the path, for messages.
            .init(
                place: "outputs[\(output.fileIndex ?? index)].path", location: output.pathLocation, subject: output.name, root: roots[index]
            )
        }
    }

    /// Checks the paths of one listing, whose targets are in the order of `outputs` and whose
    /// record is at `listing`; `name` gives the display name of the input whose record is at an
    /// offset, and `isInput` whether a path's digest is an input's key.
    mutating func check(
        _ targets: [OutputTarget], of input: InputFile, at listing: Int64, naming name: (Int64) -> String?,
        isInput: (PathDigest) -> Bool
    ) {
        // Paths that may meet once sizes are known differ only in digits: each output is
        // compared with the earlier ones of the same skeleton, so planning costs time in
        // proportion to the outputs (all with all grew with their square).
        var bySkeleton: [String: (all: [Int], unknown: [Int])] = [:]
        let patterns = targets.map(\.pattern)
        for (index, target) in targets.enumerated() where target.isMade {
            let place = outputWriters[index].place
            checkWhere(target, at: index, input: input, listing: listing, place: place, naming: name, isInput: isInput)
            checkSizesTellApart(
                target, at: index, among: targets, patterns: patterns, input: input, place: place, bySkeleton: &bySkeleton)
        }
    }

    /// The checks of one path as written: another output writing it, a file in the way of its
    /// folder, an S3 output over an input.
    private mutating func checkWhere(
        _ target: OutputTarget, at index: Int, input: InputFile, listing: Int64, place: String, naming name: (Int64) -> String?,
        isInput: (PathDigest) -> Bool
    ) {
        let output = outputs[index]
        // Paths still holding {width}/{height} are compared as written here, and with the other
        // outputs of the same input in `checkSizesTellApart`; the runner catches the rest when
        // the sizes are known.
        let digest = PathDigest(target.plannedPath)
        if let writer = writers[digest] {
            let otherName = name(writer.listing)
            let other = "output \"\(outputs[writer.output].name)\" of \(otherName ?? "an earlier input")"
            // Two URLs that differ only where they are hidden (a query value) are shown alike.
            let alike =
                writer.listing != listing && input.url != nil && otherName == input.displayName
                ? " (two inputs that differ only in what URLs show as …)" : ""
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) and \(other)\(alike) would both write \(target.plannedPath)"))
        } else {
            writers[digest] = (listing, index)
        }
        // Found now, not after every input was decoded: a file where a folder must be, or a
        // folder the run may not write in.
        if !target.isInStore, let file = folders.fileInTheWay(of: target.plannedPath) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would write \(target.plannedPath), but \(file) is a file, not a folder"
                ))
        } else if !target.isInStore, let (folder, reason) = folders.unwritableFolder(of: target.plannedPath) {
            warnings.append(
                "\(place): output \"\(output.name)\" of \(input.displayName) would write \(target.plannedPath), "
                    + "but \(folder) cannot be written in (\(reason)): its files fail unless they are up to date")
        }
        if target.isInStore, isInput(digest) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would overwrite the input \(target.plannedPath)"))
        }
    }

    /// Checks an input in an object store, whose address's digest is `digest`, against the outputs
    /// in stores planned before it: none may replace it.
    mutating func check(storedInput input: InputFile, digest: PathDigest, naming name: (Int64) -> String?) {
        guard let writer = writers[digest] else { return }
        let output = outputs[writer.output]
        problems.append(
            .init(
                path: outputWriters[writer.output].place, location: output.pathLocation,
                message:
                    "output \"\(output.name)\" of \(name(writer.listing) ?? "an earlier input") would overwrite the input \(input.path)"))
    }

    /// A size not known yet may turn out to be the one that makes two of one input's paths meet.
    private mutating func checkSizesTellApart(
        _ target: OutputTarget, at index: Int, among targets: [OutputTarget], patterns: [PathPattern], input: InputFile,
        place: String, bySkeleton: inout [String: (all: [Int], unknown: [Int])]
    ) {
        let output = outputs[index]
        let pattern = patterns[index]
        let skeleton = pattern.skeleton
        do {
            // Scoped: the group's arrays must have one owner again when appended to.
            let group = bySkeleton[skeleton] ?? ([], [])
            let candidates = pattern.hasUnknowns ? group.all : group.unknown
            pairsCompared += 1 + candidates.count
            for earlier in candidates {
                let other = targets[earlier]
                guard other.plannedPath != target.plannedPath, pattern.canMatch(patterns[earlier]) else { continue }
                // One output's widths never meet: each width made is a different number.
                if let group = output.variant?.group, outputs[earlier].variant?.group == group { continue }
                problems.append(
                    .init(
                        path: place, location: output.pathLocation,
                        message:
                            "outputs \"\(outputs[earlier].name)\" and \"\(output.name)\" of \(input.displayName) could both write "
                            + "\(target.plannedPath) and \(other.plannedPath): their steps do not fix the sizes that tell them apart"))
            }
        }
        bySkeleton[skeleton, default: ([], [])].all.append(index)
        if pattern.hasUnknowns { bySkeleton[skeleton, default: ([], [])].unknown.append(index) }
    }
}

/// Finds files standing where output folders must be, and folders the run may not write in,
/// looking at each folder once, and naming each such file or folder once.
struct FolderCheck {
    /// Each folder looked at, and the file in its way (nil when none).
    private var seen: [String: String?] = [:]
    /// Each folder looked at for writing, and the folder that cannot be written in with why (nil when none).
    private var writable: [String: (folder: String, reason: String)?] = [:]
    private var named: Set<String> = []

    /// The folder, `path`'s or the nearest existing one above it (where the missing ones would be
    /// made), that this process may not write in, with the system's reason (a folder without
    /// write permission, a read-only file system), unless named before.
    mutating func unwritableFolder(of path: String) -> (folder: String, reason: String)? {
        guard let found = unwritable((path as NSString).deletingLastPathComponent), named.insert(found.folder).inserted else {
            return nil
        }
        return found
    }

    private mutating func unwritable(_ folder: String) -> (folder: String, reason: String)? {
        if let known = writable[folder] { return known }
        let found: (folder: String, reason: String)?
        if access(folder, W_OK | X_OK) == 0 {
            found = nil
        } else if errno == ENOENT {
            let parent = (folder as NSString).deletingLastPathComponent
            found = parent == folder || parent.isEmpty ? nil : unwritable(parent)
        } else {
            found = (folder, String(cString: strerror(errno)))
        }
        writable[folder] = found
        return found
    }

    /// The file (not a folder) at `path`'s folder or one of its ancestors, unless named before.
    mutating func fileInTheWay(of path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        guard let file = blocking(folder), named.insert(file).inserted else { return nil }
        return file
    }

    private mutating func blocking(_ folder: String) -> String? {
        if let known = seen[folder] { return known }
        var info = stat()
        let found: String?
        if stat(folder, &info) == 0 {
            // An existing folder (through symbolic links, as writing follows them) ends the walk.
            found = info.st_mode & S_IFMT == S_IFDIR ? nil : folder
        } else if errno == ENOTDIR {
            let parent = (folder as NSString).deletingLastPathComponent
            found = parent == folder ? nil : blocking(parent)
        } else {
            found = nil
        }
        seen[folder] = found
        return found
    }
}
