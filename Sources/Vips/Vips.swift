import CVips
import Glibc

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

    /// Whether the libvips running is `major.minor.micro` or later.
    public static func isAtLeast(_ major: Int32, _ minor: Int32, _ micro: Int32) -> Bool {
        (vips_version(0), vips_version(1), vips_version(2)) >= (major, minor, micro)
    }

    /// Sets how many worker threads libvips runs for each image it computes.
    ///
    /// The pipeline already keeps several images in flight on its stage queues, so one thread
    /// per image avoids oversubscribing the cores (see Benchmarks/RESULTS.md).
    public static func setThreadsPerImage(_ threads: Int) {
        vips_concurrency_set(Int32(max(1, threads)))
    }

    /// Sets glibc's allocator up for a long multi-threaded libvips batch, as `MALLOC_ARENA_MAX`,
    /// `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TRIM_THRESHOLD_` would; each variable, when set,
    /// wins over its setting here.
    ///
    /// - Arenas: glibc gives every thread that contends for the heap an arena of its own, up to
    ///   eight per core, and keeps freed pixel buffers in them: over a long batch, libvips'
    ///   worker threads and the stage queues make memory look like a leak. Two are enough.
    /// - Blocks of `mmapThreshold` bytes and more (pixel buffers, decoded images) are mapped
    ///   for themselves and given back to the system when freed. glibc's own threshold climbs
    ///   to its maximum as such blocks are freed, after which they come from the arenas and stay
    ///   there, fragmented, until the heap's top is free.
    /// - A heap's free top is given back once it passes `trimThreshold` bytes. Setting the
    ///   mmap threshold pins glibc's trim threshold at its small default, so the region buffers
    ///   libvips frees and allocates again with every image went back to the system and were
    ///   faulted in anew each time. `releaseFreeMemory()` still gives everything free back, between
    ///   inputs.
    ///
    /// Measured with `Benchmarks/run.sh --repeat 8` (see Benchmarks/RESULTS.md). Done by `Vips.start()`
    /// and, earlier, by `PipelineCLI.main` before any thread exists: arenas made before the
    /// call stay. An embedder calls it first thing in `main` for the full effect.
    public static func tuneAllocator(
        arenas: Int = mallocArenas, mmapThreshold: Int = mallocMmapThreshold,
        trimThreshold: Int = mallocTrimThreshold
    ) {
        let keepArenas = getenv("MALLOC_ARENA_MAX") != nil
        let keepThreshold = getenv("MALLOC_MMAP_THRESHOLD_") != nil
        let keepTrim = getenv("MALLOC_TRIM_THRESHOLD_") != nil
        _ = pl_tune_allocator(
            keepArenas ? 0 : Int32(arenas), keepThreshold ? 0 : Int32(mmapThreshold),
            keepTrim ? 0 : Int32(trimThreshold))
    }

    /// Gives the pages of freed blocks inside glibc's arenas back to the system (`malloc_trim`).
    /// glibc gives back only the free top of a heap by itself; after many images of different
    /// sizes the blocks below the mmap threshold (`tuneAllocator`) leave free holes that
    /// would count in the process's memory for the rest of the run.
    public static func releaseFreeMemory() {
        pl_release_free_memory()
    }

    /// Under an address-space limit (`RLIMIT_AS`, `ulimit -v`), gives new threads the stack size
    /// glibc uses where no stack limit is set, instead of the larger one it takes from
    /// `RLIMIT_STACK`: every thread reserves its whole stack in the address space, and libvips'
    /// workers with the stage queues' threads then failed to start under a limit a run is meant
    /// to fit ("Error creating thread"). That size is far more than libvips' operations use.
    public static func fitThreadStacksToAddressSpaceLimit() {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_AS.rawValue), &limits) == 0, limits.rlim_cur != rlim_t.max else { return }
        _ = pl_set_default_thread_stack(2 << 20)
    }

    /// Two arenas: measured with `Benchmarks/run.sh --repeat 8` (see Benchmarks/RESULTS.md), as the pyvips
    /// reference sets it.
    public static let mallocArenas = 2

    /// Large enough that only a libvips region buffer or a decoded image is mapped on its own;
    /// the many small blocks libvips and GLib allocate stay in the arenas. On the corpus a
    /// smaller threshold costs more system time in page faults for the same peak, and larger
    /// ones leave higher peaks.
    public static let mallocMmapThreshold = 1 << 20

    /// Above the region buffers libvips frees and allocates again with every image, so they stay
    /// in the heap instead of being faulted in anew: the standard job over the corpus takes fewer
    /// page faults and less system time than with glibc's threshold, for a peak a little higher.
    public static let mallocTrimThreshold = 8 << 20

    /// The permissions of a file the process makes for others to read (an output, a report, a
    /// cache entry): 0666 less the umask, as `open` would give, read once before libvips runs
    /// anything. The umask is the process's, and liborc, which libvips compiles its vector code
    /// with, narrows it for a moment while it makes a private file for that code: a file opened
    /// in that moment would be private too. Writers set this mode with `fchmod` instead.
    package static let newFileMode: mode_t = {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
        let mask = line.flatMap { mode_t($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
        return 0o666 & ~mask
    }()

    /// Why libvips runs without its vector code in this process, or nil when it runs with it.
    ///
    /// liborc, which compiles that code, maps it from a file it makes in the first of
    /// `$XDG_RUNTIME_DIR`, `$HOME`, `$TMPDIR` and `/tmp` that it can, sized without writing: on
    /// a full file system its first write into the mapping ends the process with SIGBUS, with
    /// no message. With that folder short of room, the code is turned off before libvips starts
    /// (`VIPS_NOVECTOR`), and the work is done, slower, by plain C.
    package static let vectorCodeOff: String? = {
        guard getenv("VIPS_NOVECTOR") == nil, let short = vectorCodeFolderShortOfRoom() else { return nil }
        setenv("VIPS_NOVECTOR", "1", 1)
        return short
    }()

    /// The folder liborc would map its code from, when it has too little room for it: what
    /// `vectorCodeOff` says.
    private static func vectorCodeFolderShortOfRoom() -> String? {
        let variables = ["XDG_RUNTIME_DIR", "HOME", "TMPDIR"].compactMap { name in getenv(name).map { ("$" + name, String(cString: $0)) } }
        // `ST_NOEXEC` of <sys/statvfs.h>, an enum value Swift's Glibc module leaves out.
        let noExecutables: UInt = 8
        for (name, folder) in variables + [("", "/tmp")] {
            var info = statvfs()
            // liborc goes on to the next where it cannot make the file, or map it to run.
            guard !folder.isEmpty, access(folder, W_OK | X_OK) == 0, statvfs(folder, &info) == 0, info.f_flag & noExecutables == 0
            else { continue }
            let room = UInt64(info.f_bavail) * UInt64(info.f_frsize)
            // A few of its 64 KiB regions, with room to spare.
            guard room < 1 << 20 else { return nil }
            let named = name.isEmpty ? folder : "\(folder) (\(name))"
            return "\(named) has \(room / 1024) KiB free, too little for libvips to compile its vector code in: "
                + "the work is done without it, slower"
        }
        return nil
    }

    /// Swift runs a global's initializer exactly once, under a lock: that is our `vips_init` guard.
    private static let startup: VipsError? = {
        // Before libvips (and liborc) can touch the umask.
        _ = newFileMode
        // Before libvips reads it.
        _ = vectorCodeOff
        tuneAllocator()
        fitThreadStacksToAddressSpaceLimit()
        guard vips_init("pipeline") == 0 else {
            return VipsError.fromLibrary(operation: "vips_init")
        }
        // A batch touches each operation once per image, so the operation cache only holds memory.
        vips_cache_set_max(0)
        // `abs` compiles its vector code when its class is first used: here, before another
        // thread can be compiling or freeing some (`VipsImage.serializingVectorCode(_:)`).
        _ = g_type_class_ref(vips_type_find("VipsOperation", "abs"))
        pl_silence_warnings()
        return nil
    }()
}
