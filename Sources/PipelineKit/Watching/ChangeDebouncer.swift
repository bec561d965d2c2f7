/// Gathers file changes into batches: a batch is due once no change has come for `quietPeriod`,
/// or `longestWait` after its first change, whichever is sooner, so a burst of copies is one
/// batch and a folder that never goes quiet still gets runs.
///
/// A value with no clock of its own: the watcher passes the time in, and tests pass made-up times.
struct ChangeDebouncer {
    let quietPeriod: Duration
    let longestWait: Duration

    /// The changed paths in the order first seen, without repeats.
    private var paths: [String] = []
    private var seen: Set<String> = []
    /// Whether the kernel dropped events (its queue overflowed): what changed is not known.
    private var overflowed = false
    private var first: ContinuousClock.Instant?
    private var last: ContinuousClock.Instant?

    init(quietPeriod: Duration, longestWait: Duration) {
        self.quietPeriod = quietPeriod
        self.longestWait = max(longestWait, quietPeriod)
    }

    /// Whether a change is waiting to be taken.
    var isPending: Bool { first != nil }

    /// Notes that `path` changed at `time`.
    mutating func record(_ path: String, at time: ContinuousClock.Instant) {
        if seen.insert(path).inserted { paths.append(path) }
        note(time)
    }

    /// Notes that changes were lost at `time` (an overflow of the kernel's event queue).
    mutating func recordOverflow(at time: ContinuousClock.Instant) {
        overflowed = true
        note(time)
    }

    /// When the pending batch is due, or nil when nothing is pending.
    var dueTime: ContinuousClock.Instant? {
        guard let first, let last else { return nil }
        return min(last + quietPeriod, first + longestWait)
    }

    /// The pending batch if it is due at `time` (and then a new one starts), else nil.
    mutating func takeIfDue(at time: ContinuousClock.Instant) -> FileChanges? {
        guard let due = dueTime, due <= time else { return nil }
        let batch = FileChanges(paths: paths, overflowed: overflowed)
        self = ChangeDebouncer(quietPeriod: quietPeriod, longestWait: longestWait)
        return batch
    }

    private mutating func note(_ time: ContinuousClock.Instant) {
        if first == nil { first = time }
        last = max(last ?? time, time)
    }
}
