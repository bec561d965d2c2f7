import Vips

/// The qualities the searches of one decoded source chose so far, by output family (one
/// pipeline-file output's widths), format and target: where a neighbouring width's search starts.
final class NeighbourQualities: Sendable {
    private let chosen = Locked<[String: Int]>([:])

    /// What `job`'s neighbours share: its listing, its pipeline-file output, format and target.
    static func key(of job: OutputJob) -> String? {
        guard let target = job.output.encoder.qualityTarget else { return nil }
        let family = job.output.fileIndex ?? job.outputIndex
        return "\(job.listing) \(family) \(job.output.encoder.format.rawValue) \(target.identity)"
    }

    /// Notes the quality `written`'s search chose, for the neighbours of `job` still to search.
    func note(_ written: WrittenOutput, for job: OutputJob) {
        guard let quality = written.searchedQuality?.quality, let key = Self.key(of: job) else { return }
        chosen.withLock { $0[key] = quality }
    }

    /// The quality a neighbour of `job` chose, if one has finished.
    func quality(for job: OutputJob) -> Int? {
        guard let key = Self.key(of: job) else { return nil }
        return chosen.withLock { $0[key] }
    }
}

extension IncrementalRuns {
    /// Where `job`'s quality search starts, when something better than a guess from the image
    /// is known: the quality the journal remembers for its file, searched for the same score
    /// (the input or other settings changed a little since, or the run is forced), else the one
    /// a neighbouring width of the same input, format and target chose in this run. A quality
    /// found for another score is no start: a search from it can end elsewhere within its
    /// tolerance (with chroma kept whole, where a fresh one would not), so the file would
    /// depend on what the target was before. Nil for an output without a target, and for one
    /// whose path names `{hash}`: a search stops anywhere within its tolerance, so its answer
    /// depends on where it starts, and a neighbour's choice is known only when that neighbour
    /// finished first. Started from the image alone, the same input and settings give the same
    /// file, so the same name, on every run, fresh or not, sharded or not.
    func startingQuality(for job: OutputJob, chosen: NeighbourQualities) -> Int? {
        guard let target = job.output.encoder.qualityTarget, !job.target.namesHash else { return nil }
        return journal?.rememberedQuality(job.target.plannedPath, target: target.ssimulacra2) ?? chosen.quality(for: job)
    }
}

extension OutputJournal {
    /// The quality the last search recorded for the output planned at `planned`, searched for
    /// `target` (a record of an earlier version, without its target, is taken as one): a start
    /// for this run's search, not a reason to skip it.
    func rememberedQuality(_ planned: String, target: Double) -> Int? {
        state.withLock { state in
            guard let rare = state.records[DiskPath(planned)]?.last.rare, rare.target.map({ $0 == target }) ?? true else { return nil }
            return rare.quality
        }
    }
}

extension OutputDefinition {
    /// The output with its quality search starting at `quality`, when one is given.
    func searchingFrom(_ quality: Int?) -> OutputDefinition {
        guard let quality, encoder.qualityTarget != nil else { return self }
        var output = self
        output.encoder.qualityTarget?.start = quality
        return output
    }
}
