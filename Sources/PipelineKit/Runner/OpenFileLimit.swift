import Foundation

/// How many files the process may have open at once (`ulimit -n`, RLIMIT_NOFILE), and how to
/// tell a failure caused by reaching it.
///
/// A run holds a few descriptors per image in flight (the input while decoding, the temporary
/// output and libvips' copy of it while encoding) besides its own (the journal, libdispatch's,
/// libcurl's sockets). Many systems still start processes with a soft limit of 1024 or less and a
/// far higher hard one: `raiseToHardLimit()` lifts the soft limit as servers do at start.
///
/// A run never plans to use the last descriptor: libdispatch opens files of its own while the
/// process runs (its worker-pool monitor reads `/proc`) and ends the process when it cannot, so
/// under a low limit the runner takes fewer inputs at once (`inFlight(fitting:)`).
public enum OpenFileLimit {
    /// Descriptors a run holds besides its inputs' (standard streams, the journal, libdispatch's
    /// and libvips' own, libcurl's sockets), with room to spare for libraries that open more.
    public static let heldByTheRun = 24

    /// Descriptors one input in flight may hold at once: the input while decoding, the temporary
    /// output and libvips' copy of it while encoding, a fetch's socket.
    public static let heldPerInput = 4

    /// Descriptors a run with `inFlight` inputs at a time needs: its own, and each input's.
    public static func needed(inFlight: Int) -> Int { heldByTheRun + heldPerInput * inFlight }

    /// The fewest descriptors any command starts with: the standard streams, libdispatch's
    /// event loop (which ends the process, by an illegal instruction, when it finds none free)
    /// and a file to read.
    public static let leastToStart = 8

    /// The inputs a run may have in flight under `limit` (the soft limit now by default): at most
    /// `wanted`, and at least one. Nil when not even one input fits beside the run's own.
    public static func inFlight(fitting wanted: Int, limit: Int? = current) -> Int? {
        guard let limit else { return wanted }
        let fitting = (limit - heldByTheRun) / heldPerInput
        return fitting >= 1 ? min(wanted, fitting) : nil
    }

    /// The soft limit now, or nil when there is none.
    public static var current: Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(limit.rlim_cur)
    }

    /// Raises the soft limit to the hard limit (what a process may raise it to without
    /// privileges). `pipeline` does this first thing; an embedding program should do the same
    /// at its start, or raise `ulimit -n` itself. Returns the soft limit now.
    @discardableResult
    public static func raiseToHardLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return current }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return current
    }

    /// Whether the process cannot open `headroom` more files now (EMFILE), probed with dup(2):
    /// used to explain a failure that just happened, which libraries otherwise report as a bad
    /// descriptor, a write error, an unknown format or nothing at all. A few, not one: the
    /// failed step may have needed several at once, and another thread may have closed one
    /// since (seen under ThreadSanitizer, whose runtime opens files of its own, at `ulimit -n 10`).
    static var isReached: Bool {
        var probes: [Int32] = []
        defer { for probe in probes { close(probe) } }
        for _ in 0..<headroom {
            let probe = dup(STDERR_FILENO)
            guard probe >= 0 else { return errno == EMFILE }
            probes.append(probe)
        }
        return false
    }

    static let headroom = 4

    /// Whether a library's error message says a descriptor could not be had. libvips writes to
    /// a copy (dup) of the output's descriptor: when that copy fails, it writes to -1 and
    /// reports "Bad file descriptor", although the descriptor it was given is open.
    static func isReported(in message: String) -> Bool {
        message.contains("Too many open files") || message.contains("Bad file descriptor")
    }

    /// The reason to give for a failure when `isReached`.
    static var reason: String {
        "too many open files (this process may have \(current.map(String.init) ?? "no more") open at once; raise it with ulimit -n)"
    }
}
