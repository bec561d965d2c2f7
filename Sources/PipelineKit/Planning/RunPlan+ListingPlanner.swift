import Foundation

extension RunPlan {
    /// Plans the listings of a run's inputs, source by source in the order first found: each
    /// listing with its output paths, or why it is refused, or the earlier listing it repeats.
    struct ListingPlanner {
        /// Each output's part of its targets, made once for all the inputs. A width of `widths`
        /// names its file in the plan (and the journal) even when the image turns out narrower:
        /// the file itself is named by the width it has.
        private let outputs: [OutputTarget.Output]
        /// The sources planned, in the order first found, and each one's key.
        private var items: [Item] = []
        private var keys: [SourceKey] = []
        /// Each source's index in `items`.
        private var itemIndex: [SourceKey: Int] = [:]
        /// Every planned path checked against the others and against the disk.
        private var paths: OutputPathCheck
        /// Whether a planned path still holds a `{width}` or `{height}`.
        private var somePathsWaitForSizes = false

        init(definition: PipelineDefinition, inputs: [InputFile]) {
            outputs = definition.outputs.map { output in
                OutputTarget.Output(
                    output, baseDirectory: definition.baseDirectory,
                    fixedSize: output.variant.map { (width: $0.width, height: Int?.none) } ?? output.fixedSize())
            }
            // An S3 output may not replace the object it is made from; no other input can be
            // named by an S3 output's path.
            paths = OutputPathCheck(
                outputs: definition.outputs,
                s3Inputs: Set(inputs.filter { $0.s3Location != nil }.map { DiskPath($0.path) }),
                roots: outputs.map(\.root),
                expectedInputs: inputs.count)
            // Sized up front, as the tables of a plan of many inputs would otherwise be held twice
            // for a moment each time they grow.
            items.reserveCapacity(inputs.count)
            keys.reserveCapacity(inputs.count)
            itemIndex.reserveCapacity(inputs.count)
        }

        /// Plans one listing of `input`.
        mutating func add(_ input: InputFile) {
            let key = SourceKey(input)
            let listing = self.listing(of: input, earlier: itemIndex[key])
            if let index = itemIndex[key] {
                items[index].listings.append(listing)
            } else {
                itemIndex[key] = items.count
                items.append(Item(listings: [listing]))
                keys.append(key)
            }
        }

        /// The listing of `input`: with its targets, refused, or served by an earlier listing of
        /// the same source, whose item is at `earlier`.
        private mutating func listing(of input: InputFile, earlier: Int?) -> Listing {
            let planned = targets(for: input)
            guard let targets = planned.targets else {
                return Listing(input: input, targets: [], refusal: planned.refusal, sameAs: nil)
            }
            // The same source listed again with the same output paths (a file matched by two
            // globs, a URL repeated in a list) is the same work: it is done once and reported
            // for each listing.
            if let earlier,
                let twin = items[earlier].listings.firstIndex(where: {
                    $0.refusal == nil && $0.targets.map(\.plannedPath) == targets.map(\.plannedPath)
                })
            {
                return Listing(input: input, targets: [], refusal: nil, sameAs: twin)
            }
            paths.check(targets, of: input)
            if !somePathsWaitForSizes { somePathsWaitForSizes = targets.contains(where: \.hasUnknownSizes) }
            return Listing(input: input, targets: targets, refusal: nil, sameAs: nil)
        }

        /// What planning found, for the checks that follow.
        struct Planned {
            /// The sources, in the order first found, and each one's key.
            var items: [Item]
            var keys: [SourceKey]
            /// Every planned path with what writes it.
            var writes: [WriteCheck.Write]
            var problems: [PipelineFileError.Problem]
            var pairsCompared: Int
            var somePathsWaitForSizes: Bool
        }

        /// What was planned, taken out: the tables that found repeated sources and paths are
        /// let go here, before the write check builds its own beside the plan.
        consuming func finish() -> Planned {
            Planned(
                items: items, keys: keys, writes: paths.writes, problems: paths.problems, pairsCompared: paths.pairsCompared,
                somePathsWaitForSizes: somePathsWaitForSizes)
        }

        /// Every output's target for `input`, or why the listing is refused: the first output
        /// whose path cannot be made.
        private func targets(for input: InputFile) -> (targets: [OutputTarget]?, refusal: String?) {
            var targets: [OutputTarget] = []
            targets.reserveCapacity(outputs.count)
            let values = OutputTarget.values(of: input)
            for output in outputs {
                do {
                    targets.append(try OutputTarget(output, inputValues: values))
                } catch {
                    return (nil, "refused: output \"\(output.name)\": \(error.message)")
                }
            }
            return (targets, nil)
        }
    }
}

/// Checks each planned output path as the listings are planned (two outputs writing one path, a
/// file where a folder must be, an S3 output over its own input, paths that may meet once sizes
/// are known), and gathers the files written for `WriteCheck`.
struct OutputPathCheck {
    private let outputs: [OutputDefinition]
    /// The inputs that are S3 objects, by their `s3://` addresses.
    private let s3Inputs: Set<DiskPath>
    /// Each planned path, by its bytes, and the index in `writes` of what writes it.
    private var writers: [DiskPath: Int] = [:]
    private var folders = FolderCheck()
    private(set) var problems: [PipelineFileError.Problem] = []
    /// Every planned path with what writes it, S3 objects too (`WriteCheck` compares the files).
    private(set) var writes: [WriteCheck.Write] = []
    /// Each output's writer of files, shared by its writes.
    private let outputWriters: [WriteCheck.Write.Writer]
    /// Paths compared for a clash of sizes not known yet: kept here, and counted by the plan
    /// (`WorkCounter`) once, so that the counting stays out of the comparing.
    private(set) var pairsCompared = 0

    /// `expectedInputs`: how many listings are likely to be checked, to size the tables once.
    init(outputs: [OutputDefinition], s3Inputs: Set<DiskPath>, roots: [String], expectedInputs: Int = 0) {
        self.outputs = outputs
        self.s3Inputs = s3Inputs
        outputWriters = outputs.enumerated().map { index, output in
            // Where the pipeline file sets the path, for messages.
            .init(
                place: "outputs[\(output.fileIndex ?? index)].path", location: output.pathLocation, subject: output.name, root: roots[index]
            )
        }
        writers.reserveCapacity(expectedInputs * outputs.count)
        writes.reserveCapacity(expectedInputs * outputs.count)
    }

    /// Checks the paths of one listing, whose targets are in the order of `outputs`.
    mutating func check(_ targets: [OutputTarget], of input: InputFile) {
        // Paths that may meet once sizes are known differ only in digits: each output is
        // compared with the earlier ones of the same skeleton, so planning costs time in
        // proportion to the outputs (all with all grew with their square).
        var bySkeleton: [String: (all: [Int], unknown: [Int])] = [:]
        let patterns = targets.map(\.pattern)
        for (index, target) in targets.enumerated() {
            let place = outputWriters[index].place
            checkWhere(target, at: index, input: input, place: place)
            checkSizesTellApart(
                target, at: index, among: targets, patterns: patterns, input: input, place: place, bySkeleton: &bySkeleton)
        }
    }

    /// The checks of one path as written: another output writing it, a file in the way of its
    /// folder, an S3 output over an input.
    private mutating func checkWhere(_ target: OutputTarget, at index: Int, input: InputFile, place: String) {
        let output = outputs[index]
        // Paths still holding {width}/{height} are compared as written here, and with the other
        // outputs of the same input in `checkSizesTellApart`; the runner catches the rest when
        // the sizes are known.
        if let writer = writers[DiskPath(target.plannedPath)] {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) and \(writes[writer].what) would both write \(target.plannedPath)"
                ))
        } else {
            writers[DiskPath(target.plannedPath)] = writes.count
        }
        // Found now, not after every input was decoded: a file where a folder must be.
        if !target.isS3, let file = folders.fileInTheWay(of: target.plannedPath) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would write \(target.plannedPath), but \(file) is a file, not a folder"
                ))
        }
        if target.isS3, s3Inputs.contains(DiskPath(target.plannedPath)) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would overwrite the input \(target.plannedPath)"))
        }
        writes.append(.init(outputWriters[index], input: input.displayName, path: target.plannedPath))
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

/// Finds files standing where output folders must be, looking at each folder once, and naming
/// each such file once.
private struct FolderCheck {
    /// Each folder looked at, and the file in its way (nil when none).
    private var seen: [String: String?] = [:]
    private var named: Set<String> = []

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
