import Foundation

extension RunPlan {
    /// Plans the listings of a run's inputs, source by source in the order first found: each
    /// listing with its output paths, or why it is refused, or the earlier listing it repeats.
    struct ListingPlanner {
        private let outputs: [OutputDefinition]
        private let baseDirectory: URL
        /// Each output's width and height when its steps (or its width of `widths`) fix them. A
        /// width of `widths` names its file in the plan (and the journal) even when the image
        /// turns out narrower: the file itself is named by the width it has.
        private let fixedSizes: [(width: Int?, height: Int?)]
        /// Each output's folder, absolute: one string that every input's target shares.
        private let roots: [String]
        private var listingsBySource: [SourceKey: [Listing]] = [:]
        private var sourceOrder: [SourceKey] = []
        /// Every planned path checked against the others and against the disk.
        private(set) var paths: OutputPathCheck
        /// Whether a planned path still holds a `{width}` or `{height}`.
        private(set) var somePathsWaitForSizes = false

        init(definition: PipelineDefinition, inputs: [InputFile]) {
            outputs = definition.outputs
            baseDirectory = definition.baseDirectory
            fixedSizes = definition.outputs.map { output in
                output.variant.map { (width: $0.width, height: Int?.none) }
                    ?? output.fixedSize()
            }
            roots = definition.outputs.map { OutputTarget.root(of: $0, baseDirectory: definition.baseDirectory) }
            // Files, and S3 objects (an output may not replace the object it is made from either).
            paths = OutputPathCheck(
                outputs: definition.outputs,
                inputPaths: Set(inputs.filter { !$0.isRemote || $0.s3Location != nil }.map(\.path)),
                roots: roots,
                expectedInputs: inputs.count)
            // Sized up front, as the tables of a plan of many inputs would otherwise be held twice
            // for a moment each time they grow.
            listingsBySource.reserveCapacity(inputs.count)
            sourceOrder.reserveCapacity(inputs.count)
        }

        /// Plans one listing of `input`.
        mutating func add(_ input: InputFile) {
            let key = SourceKey(input)
            let earlier = listingsBySource[key] ?? []
            if listingsBySource[key] == nil { sourceOrder.append(key) }
            let planned = targets(for: input)
            guard let targets = planned.targets else {
                listingsBySource[key, default: []].append(Listing(input: input, targets: [], refusal: planned.refusal, sameAs: nil))
                return
            }
            // The same source listed again with the same output paths (a file matched by two
            // globs, a URL repeated in a list) is the same work: it is done once and reported
            // for each listing.
            if let twin = earlier.firstIndex(where: { $0.refusal == nil && $0.targets.map(\.plannedPath) == targets.map(\.plannedPath) }) {
                listingsBySource[key, default: []].append(Listing(input: input, targets: [], refusal: nil, sameAs: twin))
                return
            }
            paths.check(targets, of: input)
            if !somePathsWaitForSizes { somePathsWaitForSizes = targets.contains(where: \.hasUnknownSizes) }
            listingsBySource[key, default: []].append(Listing(input: input, targets: targets, refusal: nil, sameAs: nil))
        }

        /// Every output's target for `input`, or why the listing is refused: the first output
        /// whose path cannot be made.
        private func targets(for input: InputFile) -> (targets: [OutputTarget]?, refusal: String?) {
            var targets: [OutputTarget] = []
            for (index, output) in outputs.enumerated() {
                do {
                    targets.append(
                        try OutputTarget(
                            output: output, input: input, baseDirectory: baseDirectory, root: roots[index], fixedSize: fixedSizes[index]))
                } catch {
                    return (nil, "refused: output \"\(output.name)\": \(error.message)")
                }
            }
            return (targets, nil)
        }

        /// The sources planned, in the order first found, each with its key.
        var items: [(key: SourceKey, item: Item)] {
            sourceOrder.compactMap { key in listingsBySource[key].map { (key: key, item: Item(listings: $0)) } }
        }
    }
}

/// Checks each planned output path as the listings are planned (two outputs writing one path, a
/// file where a folder must be, an S3 output over its own input, paths that may meet once sizes
/// are known), and gathers the files written for `WriteCheck`.
struct OutputPathCheck {
    private let outputs: [OutputDefinition]
    /// The inputs' paths and S3 objects.
    private let inputPaths: Set<String>
    /// Each planned path, by its bytes, and what writes it.
    private var writers: [DiskPath: (input: String, output: String)] = [:]
    private var folders = FolderCheck()
    private(set) var problems: [PipelineFileError.Problem] = []
    private(set) var writes: [WriteCheck.Write] = []
    /// Each output's writer of files, shared by its writes.
    private let outputWriters: [WriteCheck.Write.Writer]
    /// Paths compared for a clash of sizes not known yet: kept here, and counted by the plan
    /// (`WorkCounter`) once, so that the counting stays out of the comparing.
    private(set) var pairsCompared = 0

    /// `expectedInputs`: how many listings are likely to be checked, to size the tables once.
    init(outputs: [OutputDefinition], inputPaths: Set<String>, roots: [String], expectedInputs: Int = 0) {
        self.outputs = outputs
        self.inputPaths = inputPaths
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
                        "output \"\(output.name)\" of \(input.displayName) and output \"\(writer.output)\" of \(writer.input) would both write \(target.plannedPath)"
                ))
        } else {
            writers[DiskPath(target.plannedPath)] = (input.displayName, output.name)
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
        if target.isS3, inputPaths.contains(target.plannedPath) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would overwrite the input \(target.plannedPath)"))
        }
        if !target.isS3 {
            writes.append(.init(outputWriters[index], input: input.displayName, path: target.plannedPath))
        }
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
