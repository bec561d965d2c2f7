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
        /// The planned paths a file of another size than planned may reach.
        private var reach: SizedPathReach
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
        /// The `focusPoints` file when an output crops by it: two names of one file may then
        /// ask for different crops of it.
        private let cropPoints: FocusPoints?
        /// The problems of names of one file with different crop points.
        private var pointClashes: [PipelineFileError.Problem] = []

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
            reach = SizedPathReach(definitions: definition.outputs, outputs: outputs)
            definitions = definition.outputs
            subsetsUnmatched = Set(definition.outputs.indices.filter { definition.outputs[$0].inputSubset != nil })
            focusPoints = definition.focusPoints
            cropPoints = definition.outputs.contains { $0.steps.contains(where: \.readsFocusPoint) } ? definition.focusPoints : nil
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
            // A refused file named again by the same name (a glob and its name) is refused once.
            if listing.refusal != nil, earlier.contains(where: { $0.refusal != nil && $0.input.displayName == input.displayName }) {
                return
            }
            if let twin = listing.sameAs {
                // The very listing again (a file named, and matched by a glob too): one input,
                // made, counted, printed and in the manifest once.
                if earlier[twin].input.displayName == input.displayName { return }
                // Two names of one file with different points ask for two crops into each path.
                if let cropPoints, cropPoints.point(for: input) != cropPoints.point(for: earlier[twin].input) {
                    pointClashes.append(pointClash(of: input, and: earlier[twin], points: cropPoints))
                    return
                }
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
            reach.note(listing.targets, of: listing.input)
            if !somePathsWaitForSizes { somePathsWaitForSizes = listing.targets.contains(where: \.hasUnknownSizes) }
        }

        /// The problem of two names of one file whose different points would crop different
        /// images into the same paths.
        private func pointClash(of input: InputFile, and earlier: Listing, points: FocusPoints) -> PipelineFileError.Problem {
            // An output of several widths or formats is one name in many definitions.
            var readers: [String] = []
            for output in definitions where output.steps.contains(where: \.readsFocusPoint) && !readers.contains("\"\(output.name)\"") {
                readers.append("\"\(output.name)\"")
            }
            func point(_ input: InputFile) -> String { points.point(for: input).map { "\($0)" } ?? "none (the centre)" }
            // A file that is cropped by the point, not one of a width alone beside it.
            let cropped = zip(earlier.targets, definitions).first { $0.isMade && $1.steps.contains(where: \.readsFocusPoint) }
            let path = cropped?.0.plannedPath ?? "its outputs"
            return .init(
                path: "focusPoints", location: nil,
                message: "\(earlier.input.displayName) and \(input.displayName) are one file with different points in "
                    + "\(points.file.path), \(point(earlier.input)) and \(point(input)): output \(readers.joined(separator: ", ")) "
                    + "would crop by each into the same paths (\(path)); give both names one point, or name the file once")
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
            var sizedPathReach: SizedPathReach
            var warnings: [String]
            var unwritableFolders: [UnwritableFolder]
        }

        /// What was planned, taken out: the table of output paths is let go here, before the
        /// write check builds its own beside the plan.
        consuming func finish() -> Planned {
            var problems = paths.problems + pointClashes
            if let storeFailure { problems.append(SourceStore.unkeptProblem(storeFailure)) }
            if !refs.isEmpty { problems += InputSubset.unmatchedProblems(subsetsUnmatched, of: definitions) }
            return Planned(
                sources: SourceList(store: store.finish(outputs: outputs), refs: refs), sourceIndex: sourceIndex,
                writeCheck: writeCheck, problems: problems,
                pairsCompared: paths.pairsCompared, somePathsWaitForSizes: somePathsWaitForSizes, sizedPathReach: reach,
                warnings: paths.warnings + (focusPoints?.unmatchedWarning(focusPointsUnmatched).map { [$0] } ?? []),
                unwritableFolders: paths.unwritableFolders)
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
