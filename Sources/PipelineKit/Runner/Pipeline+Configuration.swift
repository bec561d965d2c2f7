import Vips

extension Pipeline {
    /// How a pipeline uses the process it runs in: the embedding program's choices, not the
    /// pipeline file's (the `pipeline` command makes them from its environment).
    public struct Configuration: Sendable, Equatable {
        /// libvips worker threads per image, set for the whole process (`vips_concurrency_set`)
        /// when a run starts; nil leaves libvips as it is (its `VIPS_CONCURRENCY`, or one per core).
        ///
        /// The default, 1: the stage queues keep several images in flight, and one libvips
        /// thread each keeps the cores busy without oversubscribing them (measured: see Benchmarks/RESULTS.md).
        public var vipsThreadsPerImage: Int?

        /// The memory limit of the run in bytes, like `--max-memory`: inputs wait rather than
        /// start decoding past it, and an input that could never fit fails. Nil: the limit the
        /// environment sets (the cgroup's `memory.max`, `RLIMIT_AS`), if any (see `MemoryBudget`).
        public var maxMemory: Int64?

        /// What messages call `maxMemory` where they say where the budget came from (an
        /// input's `overMemoryBudget` reason, `RunSummary.memory`): the `pipeline` command sets
        /// `--max-memory`, an embedding program the name its users know the limit by.
        public var maxMemorySource = "Pipeline.Configuration.maxMemory"

        /// Settings for a run; the defaults keep one libvips thread per image and the environment's memory limit.
        public init(vipsThreadsPerImage: Int? = 1, maxMemory: Int64? = nil) {
            self.vipsThreadsPerImage = vipsThreadsPerImage
            self.maxMemory = maxMemory
        }
    }

    /// The budget a run started now would have: from `configuration.maxMemory`, else from the
    /// environment; nil when there is no limit.
    public func memoryBudget() -> MemoryBudget? {
        MemoryBudget.detect(explicit: configuration.maxMemory, source: configuration.maxMemorySource)
    }

    /// Applies the process-wide settings before a run.
    func applyConfiguration() {
        if let threads = configuration.vipsThreadsPerImage { Vips.setThreadsPerImage(threads) }
    }
}
