import CVips

/// The libvips library: started once, lazily, the first time anything needs it.
public enum Vips {
    /// Starts libvips if it is not running yet. Safe to call from any thread, any number of times.
    public static func start() throws(VipsError) {
        if let failure = startup { throw failure }
    }

    /// The libvips version, for example `8.14.1`.
    public static var version: String {
        "\(vips_version(0)).\(vips_version(1)).\(vips_version(2))"
    }

    /// Sets how many worker threads libvips runs for each image it computes.
    ///
    /// The pipeline already keeps several images in flight on its stage queues, so one thread
    /// per image avoids oversubscribing the cores (see the README's measurements).
    public static func setThreadsPerImage(_ threads: Int) {
        vips_concurrency_set(Int32(max(1, threads)))
    }

    /// Swift runs a global's initializer exactly once, under a lock: that is our `vips_init` guard.
    private static let startup: VipsError? = {
        guard vips_init("pipeline") == 0 else {
            return VipsError.fromLibrary(operation: "vips_init")
        }
        // A batch touches each operation once per image, so the operation cache only holds memory.
        vips_cache_set_max(0)
        pl_silence_warnings()
        return nil
    }()
}
