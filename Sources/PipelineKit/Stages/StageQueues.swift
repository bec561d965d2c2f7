/// One bounded queue per stage, as wide as the pipeline file says, all timed by one clock.
struct StageQueues: Sendable {
    let fetch: StageQueue
    let cache: StageQueue
    let decompress: StageQueue
    let process: StageQueue
    let encode: StageQueue

    init(_ definition: PipelineDefinition, record: @escaping @Sendable (StageOperation) -> Void) {
        let clock = RunClock()
        func queue(_ stage: Stage, _ concurrency: Int, threads: StageQueue.Threads = .sharedPerCore) -> StageQueue {
            StageQueue(stage: stage, concurrency: concurrency, threads: threads, clock: clock, record: record)
        }
        // Fetching and the cache wait on the network and the disk: a thread per lane. The
        // others compute, and share a thread per core (`StageQueue.Threads`).
        fetch = queue(.fetch, definition.fetch.concurrency, threads: .ownPerLane)
        cache = queue(.cache, definition.cache.concurrency, threads: .ownPerLane)
        decompress = queue(.decompress, definition.decompress.concurrency)
        process = queue(.process, definition.process.concurrency)
        encode = queue(.encode, definition.encode.concurrency)
    }

    /// Each stage's queued, running and done counts now.
    var counts: [Stage: StageCounts] {
        Dictionary(uniqueKeysWithValues: [fetch, cache, decompress, process, encode].map { ($0.stage, $0.counts) })
    }
}
