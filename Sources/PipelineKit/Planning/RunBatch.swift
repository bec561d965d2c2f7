/// What the shards of one sharded run have in common, and a shard of another run does not:
/// the settings outputs are made with, and the names of every input of the run, in every
/// shard. A shard's report records it, so that `pipeline merge-reports` joins only reports of
/// one batch: not one left from an earlier run over other inputs, nor one of an edited file.
public struct RunBatch: Sendable, Codable, Equatable {
    /// A digest of the settings the outputs are made with, as a shard's manifest records it.
    public var settings: String
    /// A digest of the names of every input the run found, in every shard: their count, and
    /// the sum of their hashes.
    public var inputs: String

    /// The batch of a run of `definition` over `sources`, every shard's.
    init(definition: PipelineDefinition, sources: RunPlan.SourceList) {
        settings = ImageManifest.ShardRun.settingsDigest(of: definition)
        inputs = sources.store.inputNames
    }
}
