import Foundation

/// What a run reads and writes, checked against each other before it starts.
extension RunPlan {
    /// The files a run of `definition` (read from `fileName`) reads besides its inputs, which
    /// nothing it writes may land on: the pipeline file, the list files among its inputs
    /// (`listFiles`, absolute), the local files its steps load, the ICC profiles its encoders
    /// embed, the focus file, the server's fallback image, and the object stores' shared
    /// credentials and config files.
    static func readFiles(_ definition: PipelineDefinition, fileName: String, listFiles: [String], stores: ObjectStoreAccess) -> [ReadFile]
    {
        var reads: [ReadFile] = []
        if let file = definition.sourceFile {
            reads.append(ReadFile(what: "the pipeline file \(fileName)", path: file.path))
        }
        reads += listFiles.map { ReadFile(what: "the input list \($0)", path: $0) }
        for output in definition.outputs {
            for step in output.steps {
                for resource in step.resources where resource.isFileURL {
                    let what = "the file \(resource.path) that output \"\(output.name)\"'s \(type(of: step).name) step reads"
                    reads.append(ReadFile(what: what, path: resource.path))
                }
            }
            if let profile = output.encoder.iccProfileFile {
                reads.append(ReadFile(what: "the ICC profile \(profile) that output \"\(output.name)\" embeds", path: profile))
            }
        }
        if let focus = definition.focusPoints {
            reads.append(ReadFile(what: "the focus file \(focus.file.path)", path: focus.file.path))
        }
        if let fallback = definition.serve.fallback {
            reads.append(ReadFile(what: "the fallback image \(fallback.file.path)", path: fallback.file.path))
        }
        reads += stores.configurationFiles.map { ReadFile(what: $0.what, path: $0.path) }
        return reads
    }

    /// What the run writes (the outputs `planned`, then `runWrites`) compared with what it reads
    /// (its inputs and `reads`), by real identity: each source is read back from the plan's file,
    /// one at a time.
    static func checkWrites(
        _ planned: ListingPlanner.Planned, reads: [ReadFile], runWrites: [WriteCheck.Write], outputWriters: [WriteCheck.Write.Writer],
        records: inout OutputPathRecords.Builder?
    ) -> (problems: [PipelineFileError.Problem], protected: ProtectedInputs) {
        let sources = planned.sources
        let store = sources.store
        let unsized = UnsizedOutputReach(runWrites)
        // The closures' types are spelled out: the compiler is slow to infer them here.
        typealias Checked = (write: WriteCheck.Write, origin: WriteCheck.Origin)
        let outputWrites = sources.refs.lazy.flatMap { ref -> [Checked] in
            zip(store.listingOffsets(of: ref), store.item(ref).listings).flatMap { offset, listing -> [Checked] in
                guard listing.refusal == nil, listing.sameAs == nil else { return [] }
                return listing.targets.enumerated().filter { $0.element.isMade }.map { index, target -> Checked in
                    let write = WriteCheck.Write(outputWriters[index], input: listing.input.displayName, path: target.plannedPath)
                    if target.hasUnknownSizes { unsized.check(write, pattern: target.pattern) }
                    return (write: write, origin: .output(listing: offset, index: index))
                }
            }
        }
        let otherWrites = runWrites.enumerated().map { index, write -> Checked in (write: write, origin: .run(index: index)) }
        let checked = planned.writeCheck.check(
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
        return (checked.problems + unsized.problems, checked.protected)
    }

    /// The run's own writes (the manifest, the journal, a trace or report file) that an output
    /// may write when its path waits for a size or a hash (`{width}`, `{hash}`): the check by
    /// path cannot see those meet, as the output's path is known only once its file is made.
    /// Each such write is reported once, with the first output found to reach it.
    final class UnsizedOutputReach {
        private let writes: [(write: WriteCheck.Write, pattern: PathPattern)]
        private var reported: Set<Int> = []
        private(set) var problems: [PipelineFileError.Problem] = []

        init(_ runWrites: [WriteCheck.Write]) {
            writes = runWrites.map { ($0, PathPattern($0.path)) }
        }

        /// Notes every run write that `output`, whose path with its unknowns is `pattern`, may write.
        func check(_ output: WriteCheck.Write, pattern: PathPattern) {
            guard reported.count < writes.count else { return }
            // The planned path up to its first placeholder is written as it stands: a run write
            // without that start is passed over without the pattern's walk, once per file planned.
            let literal = output.path.prefix { $0 != "{" }
            for (index, run) in writes.enumerated()
            where !reported.contains(index) && run.write.path.hasPrefix(literal) && pattern.canMatch(run.pattern) {
                reported.insert(index)
                problems.append(
                    .init(
                        path: output.place, location: output.location,
                        message:
                            "\(run.write.what) is at \(run.write.path), which \(output.what) may write (\(output.path), "
                            + "named once its file is made): give one of them another path"))
            }
        }
    }

    /// The run's own writes (`runWrites`) that cannot land where they are asked to: at a
    /// folder, or below a file. Found after the run, they would fail when the outputs are made.
    static func misplacedWrites(_ writes: [WriteCheck.Write]) -> [PipelineFileError.Problem] {
        var folders = FolderCheck()
        return writes.compactMap { write in
            var info = stat()
            if stat(write.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                return .init(
                    path: write.place, location: write.location,
                    message: "\(write.what) would be written to \(write.path), which is a folder; name a file")
            }
            guard let file = folders.fileInTheWay(of: write.path) else { return nil }
            return .init(
                path: write.place, location: write.location,
                message: "\(write.what) would be written to \(write.path), but \(file) is a file, not a folder")
        }
    }

    /// What the run writes besides its outputs: the manifest, the journal, and `sideWrites`.
    static func runWrites(_ definition: PipelineDefinition, shard: Shard?, sideWrites: [SideWrite]) -> [WriteCheck.Write] {
        var writes: [WriteCheck.Write] = []
        if let manifest = definition.manifest?.forShard(shard) {
            writes.append(
                .init(
                    place: "manifest.path", location: definition.manifestLocation, what: "the manifest", path: manifest.file.path,
                    root: nil,
                    claimed: true))
        }
        if definition.incremental {
            let journal = definition.cache.journalFile(pipeline: definition.name, baseDirectory: definition.baseDirectory)
            writes.append(.init(place: "cache", location: nil, what: "the journal", path: journal.path, root: nil))
        }
        return writes + sideWrites.map { .init(place: "", location: nil, what: $0.what, path: $0.path, root: nil) }
    }
}
