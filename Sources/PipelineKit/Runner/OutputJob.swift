/// One output of one listing of a source, as the runner will make it (or found it made).
struct OutputJob: Sendable {
    /// The listing's index among the source's `listingsToMake`.
    let listing: Int
    let input: InputFile
    /// The output's index in `definition.outputs`.
    let outputIndex: Int
    let output: OutputDefinition
    let target: OutputTarget
    /// What makes the file, for the journal; nil when it is not recorded (no journal, or an
    /// input without a version).
    let fingerprint: String?
    /// The file an earlier run made from the same input and settings, still in place: no work.
    let upToDate: WrittenOutput?
}

/// Incremental runs: decides which outputs are made again (those whose input, settings or
/// resources changed, or whose file is gone) and records the ones written.
///
/// An S3 output keeps its fingerprint with the object (user metadata) and is checked with a
/// `HEAD`, so machines that share nothing but the bucket agree on what is up to date.
struct IncrementalRuns: Sendable {
    let definition: PipelineDefinition
    let journal: OutputJournal?
    /// Make every output again, whatever the journal says.
    let force: Bool
    let resources: RunResources
    let stores: ObjectStoreAccess
    /// Where the `HEAD`s of S3 outputs run: network work, kept off the cooperative pool.
    let headQueue: StageQueue

    /// Every output of every listing, listing by listing, for a source at `version`; S3 outputs
    /// are asked whether they are up to date.
    func jobs(for listings: [RunPlan.Listing], version: String?) async throws(CancellationError) -> [OutputJob] {
        var jobs = journalJobs(for: listings, version: version)
        guard !force else { return jobs }
        for (index, job) in jobs.enumerated() where job.target.isInStore {
            guard let fingerprint = job.fingerprint else { continue }
            jobs[index] = OutputJob(
                listing: job.listing, input: job.input, outputIndex: job.outputIndex, output: job.output,
                target: job.target, fingerprint: fingerprint,
                upToDate: job.target.hasUnknownSizes
                    ? nil : try await madeEarlierInStore(job.output, of: job.input, at: job.target.plannedPath, fingerprint))
        }
        return jobs
    }

    /// The object an earlier run made for `job` under the name its image's `size` gives, once the
    /// image is made, before it is encoded, when the plan could not name it: a path that waits
    /// for `{width}` or `{height}`, or a width of a set above the image's own, which is made at
    /// the image's width and named so.
    func madeEarlierAtItsSize(_ job: OutputJob, size: ImageSize) async throws(CancellationError) -> WrittenOutput? {
        guard !force, job.target.isInStore, !job.target.namesHash, let fingerprint = job.fingerprint else { return nil }
        guard job.target.hasUnknownSizes || !job.target.fillsPlannedSizes(width: size.width, height: size.height),
            let path = try? job.target.path(width: size.width, height: size.height)
        else { return nil }
        return try await madeEarlierInStore(job.output, of: job.input, at: path, fingerprint)
    }

    /// The object at `path` that an earlier run (on any machine) made with `fingerprint`, still
    /// in the bucket.
    private func madeEarlierInStore(_ output: OutputDefinition, of input: InputFile, at path: String, _ fingerprint: String)
        async throws(CancellationError)
        -> WrittenOutput?
    {
        let object: StoredObject?
        do {
            // The store is set up on the lane too: its first use reads credentials files.
            object = try await headQueue.run(for: path, output: output.name) { [stores] isCancelled in
                try stores.store(for: path)?.head(path, isCancelled: isCancelled)
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return nil  // cannot tell: made again, and the PUT reports what is wrong
        }
        guard let object else { return nil }
        let metadata = { (name: String) in object.metadata[name] }
        // Objects put before their length was kept have none to compare.
        let lengthAsPut = metadata(OutputWriter.MetadataName.bytes).map { Int($0) ?? -1 }
        guard metadata(OutputWriter.MetadataName.fingerprint) == fingerprint, lengthAsPut == nil || lengthAsPut == object.byteCount,
            let width = metadata(OutputWriter.MetadataName.width).flatMap({ Int($0) }),
            let height = metadata(OutputWriter.MetadataName.height).flatMap({ Int($0) })
        else { return nil }
        var written = WrittenOutput(
            output: output.name, path: path, size: ImageSize(width: width, height: height),
            byteCount: object.byteCount, upToDate: true, format: output.encoder.format, fingerprint: fingerprint)
        written.storedVersion = object.version
        written.sourceSize = OutputWriter.MetadataName.size(metadata(OutputWriter.MetadataName.sourceSize))
        if let target = output.encoder.qualityTarget, let quality = metadata(OutputWriter.MetadataName.quality).flatMap({ Int($0) }),
            let score = metadata(OutputWriter.MetadataName.score).flatMap({ Double($0) })
        {
            written.searchedQuality = SearchedQuality(quality: quality, score: score, target: target.ssimulacra2)
        }
        written.warnings = OutputWriter.warnings(written.searchedQuality, output: output, input: input, path: path)
        return written
    }

    /// Every output of every listing, listing by listing, for a source at `version`, as the
    /// journal of local files knows them.
    private func journalJobs(for listings: [RunPlan.Listing], version: String?) -> [OutputJob] {
        let outputs = definition.outputs
        // The journal works out what outputs share once per run; per input only the version
        // (with the versions of the resources an output's steps use) is added.
        let focusReaders = outputs.map { $0.steps.contains(where: \.readsFocusPoint) }
        // Only the outputs made for the source set the scale it is decoded at.
        let shared = journal?.sharedPart(applicable: RunPlan.outputsMade(for: listings, outputCount: outputs.count))
        let fingerprints = outputs.indices.map { index in
            focusReaders[index]
                ? nil
                : version.flatMap { version in
                    journal?.fingerprint(version: version + resources.versions(of: outputs[index]), output: index, shared: shared)
                }
        }
        return listings.enumerated().flatMap { listingIndex, listing in
            // An output whose "inputs" leave this input out has no job for it.
            outputs.indices.filter { listing.targets[$0].isMade }.map { index in
                let target = listing.targets[index]
                // An output cropped about the input's focus point is made from that point too,
                // so changing one input's point makes that input's outputs again, no others.
                let fingerprint =
                    focusReaders[index]
                    ? version.flatMap { version in
                        journal?.fingerprint(
                            version: version + resources.versions(of: outputs[index]) + focusIdentity(listing.input), output: index,
                            shared: shared)
                    }
                    : fingerprints[index]
                return OutputJob(
                    listing: listingIndex, input: listing.input, outputIndex: index, output: outputs[index], target: target,
                    fingerprint: fingerprint,
                    upToDate: force ? nil : madeEarlier(outputs[index], of: listing.input, at: target, fingerprint))
            }
        }
    }

    /// What the focus file says of `input`, for the fingerprints of outputs cropped about it.
    private func focusIdentity(_ input: InputFile) -> String {
        guard let point = definition.focusPoints?.point(for: input) else { return "\nfocus none" }
        return "\nfocus \(point.x),\(point.y)"
    }

    /// Records `written` for `job`, made from an input of `sourceSize`: kept for a remote
    /// input, which a later run that finds the file up to date does not fetch. A file another
    /// job made (`written.fingerprint` is that job's) keeps that job's fingerprint as its tag.
    func recordWritten(_ written: WrittenOutput, for job: OutputJob, sourceSize: ImageSize) {
        guard let fingerprint = job.fingerprint, let journal else { return }
        journal.recordWritten(
            written.path, planned: job.target.plannedPath, fingerprint: fingerprint, size: written.size,
            bytes: written.byteCount, searched: written.searchedQuality, committed: written.committed,
            source: job.input.isRemote ? sourceSize : nil, tag: written.fingerprint)
    }

    private func madeEarlier(_ output: OutputDefinition, of input: InputFile, at target: OutputTarget, _ fingerprint: String?)
        -> WrittenOutput?
    {
        guard let fingerprint, !target.isInStore, let record = journal?.upToDate(target.plannedPath, fingerprint: fingerprint),
            output.tiles.map({ TilePyramidWriter.isInPlace(record.path, layout: $0.layout) }) ?? true
        else {
            return nil
        }
        // The journal remembers what a quality search chose, so an unchanged output reports it without searching.
        var searched: SearchedQuality?
        if let quality = record.quality, let score = record.score, let target = output.encoder.qualityTarget {
            searched = SearchedQuality(quality: quality, score: score, target: target.ssimulacra2)
        }
        var written = WrittenOutput(
            output: output.name, path: record.path, size: ImageSize(width: record.width, height: record.height),
            byteCount: Int(record.bytes ?? record.size), upToDate: true, format: output.encoder.format,
            fingerprint: record.tag ?? record.fingerprint,
            searchedQuality: searched)
        written.sourceSize = record.source.flatMap(OutputWriter.MetadataName.size)
        written.warnings = OutputWriter.warnings(searched, output: output, input: input, path: record.path)
        return written
    }
}
