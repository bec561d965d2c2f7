/// One bounded queue per stage, as wide as the pipeline file says, all timed by one clock.
struct StageQueues: Sendable {
    let fetch: StageQueue
    let cache: StageQueue
    let decompress: StageQueue
    let process: StageQueue
    let encode: StageQueue

    init(_ definition: PipelineDefinition, record: @escaping @Sendable (StageOperation) -> Void) {
        let clock = RunClock()
        func queue(_ stage: Stage, _ concurrency: Int) -> StageQueue {
            StageQueue(stage: stage, concurrency: concurrency, clock: clock, record: record)
        }
        fetch = queue(.fetch, definition.fetch.concurrency)
        cache = queue(.cache, definition.cache.concurrency)
        decompress = queue(.decompress, definition.decompress.concurrency)
        process = queue(.process, definition.process.concurrency)
        encode = queue(.encode, definition.encode.concurrency)
    }

    /// Each stage's queued, running and done counts now.
    var counts: [Stage: StageCounts] {
        Dictionary(uniqueKeysWithValues: [fetch, cache, decompress, process, encode].map { ($0.stage, $0.counts) })
    }
}
