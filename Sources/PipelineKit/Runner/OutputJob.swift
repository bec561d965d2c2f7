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
struct IncrementalRuns: Sendable {
    let definition: PipelineDefinition
    let journal: OutputJournal?
    /// Make every output again, whatever the journal says.
    let force: Bool
    let resources: RunResources

    /// Every output of every listing, listing by listing, for a source at `version`.
    func jobs(for listings: [RunPlan.Listing], version: String?) -> [OutputJob] {
        let outputs = definition.outputs
        // The journal works out what outputs share once per run; per input only the version
        // (with the versions of the resources an output's steps use) is added.
        let fingerprints = outputs.indices.map { index in
            version.flatMap { version in
                journal?.fingerprint(version: version + resources.versions(of: outputs[index]), output: index)
            }
        }
        return listings.enumerated().flatMap { listingIndex, listing in
            outputs.indices.map { index in
                let target = listing.targets[index]
                let fingerprint = fingerprints[index]
                return OutputJob(listing: listingIndex, input: listing.input, outputIndex: index, output: outputs[index], target: target,
                                 fingerprint: fingerprint, upToDate: force ? nil : madeEarlier(outputs[index], at: target, fingerprint))
            }
        }
    }

    func recordWritten(_ written: WrittenOutput, for job: OutputJob) {
        guard let fingerprint = job.fingerprint, let journal else { return }
        journal.recordWritten(written.path, planned: job.target.plannedPath, fingerprint: fingerprint, size: written.size)
    }

    private func madeEarlier(_ output: OutputDefinition, at target: OutputTarget, _ fingerprint: String?) -> WrittenOutput? {
        guard let fingerprint, let record = journal?.upToDate(target.plannedPath, fingerprint: fingerprint) else { return nil }
        return WrittenOutput(output: output.name, path: record.path, size: ImageSize(width: record.width, height: record.height),
                             byteCount: Int(record.size), upToDate: true, format: output.encoder.format)
    }
}
