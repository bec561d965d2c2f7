import Vips

extension Pipeline {
    /// How a pipeline uses the process it runs in: the embedding program's choices, not the
    /// pipeline file's (the `pipeline` command makes them from its environment).
    public struct Configuration: Sendable, Equatable {
        /// libvips worker threads per image, set for the whole process (`vips_concurrency_set`)
        /// when a run starts; nil leaves libvips as it is (its `VIPS_CONCURRENCY`, or one per core).
        ///
        /// The default, 1: the stage queues keep several images in flight, and one libvips
        /// thread each keeps the cores busy without oversubscribing them (measured: see the README).
        public var vipsThreadsPerImage: Int?

        public init(vipsThreadsPerImage: Int? = 1) {
            self.vipsThreadsPerImage = vipsThreadsPerImage
        }
    }

    /// Applies the process-wide settings before a run.
    func applyConfiguration() {
        if let threads = configuration.vipsThreadsPerImage { Vips.setThreadsPerImage(threads) }
    }
}
