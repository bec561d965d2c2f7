import CVips
import Dispatch

/// A time limit on libvips computations: images rendered through a deadline stop computing,
/// and their render fails, once the limit has passed.
///
/// libvips checks an image's "kill" flag each time it prepares a region of it, so a flag set
/// from a timer stops a decode between two strips, whatever the loader. A stuck header read is
/// not covered (libvips reads headers outside any computation), but a header costs at most one
/// pass over the file, which the fetch stage's size limit bounds.
///
/// A deadline may lie within a longer one (an input's decode within the whole input's time):
/// what it watches and renders, the outer one stops too, until the inner one is cancelled.
public final class VipsDeadline: Sendable {
    private struct State {
        var expired = false
        var finished = false
        /// The images being rendered now, kept alive here so the timer never kills a freed one.
        var watched: [ObjectIdentifier: (image: VipsImage, count: Int)] = [:]
    }

    /// The limit, in seconds from when the deadline was made.
    public let seconds: Double
    /// The deadline this one lies within, if any: it stops this one's images too.
    private let outer: VipsDeadline?
    /// Where the time is read.
    private let clock: Clock
    /// When the clock started: a timer that fires late (its thread starved of a core) must not
    /// let work start that the limit has already ruled out.
    private let started: Double
    private let state = Locked(State())
    /// Dispatch sources are thread-safe (their methods may be called from any thread), which
    /// the compiler cannot see through the protocol.
    private nonisolated(unsafe) let timer: (any DispatchSourceTimer)?

    /// Starts the clock. A limit that is not a positive finite number of seconds (or is
    /// longer than a few decades) never expires; `outer` still stops what this one watches.
    /// `clock` is where the time is read, between timer ticks and when one fires: a test's own
    /// lets it move time on.
    public init(seconds: Double, within outer: VipsDeadline? = nil, clock: Clock = .running) {
        self.seconds = seconds
        self.outer = outer
        self.clock = clock
        started = clock.now()
        guard seconds > 0, seconds < 1e9 else {
            timer = nil
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: Self.queue)
        self.timer = timer
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler { [weak self] in self?.timerFired() }
        timer.activate()
    }

    deinit {
        cancel()
    }

    /// Whether the limit has passed while work was still being done under it.
    public var hasExpired: Bool {
        state.withLock { $0.expired }
    }

    /// Whether the limit has passed by now: expired, or past its time by the clock though its
    /// timer has not fired yet (which then expires it).
    public var hasRunOut: Bool {
        expireIfPastLimit()
        return hasExpired
    }

    /// Stops the clock: the deadline will never expire (call it when the work is done). The
    /// images it watched are let go, with no kill left on them, by the outer deadline too.
    public func cancel() {
        let released = state.withLock { state in
            let entries = Array(state.watched.values)
            state.finished = true
            for entry in entries { pl_set_kill(entry.image.pointer, 0) }
            state.watched = [:]
            return entries
        }
        timer?.cancel()
        for entry in released {
            for _ in 0..<entry.count { outer?.release(entry.image) }
        }
    }

    /// Expires now, whatever the limit: what it watches stops as when its time runs out, and so
    /// does what the deadlines within it watch (a run abandoned with its work on the lanes).
    /// A deadline with no limit of its own is one only this stops.
    public func expireNow() {
        expire()
    }

    /// Stops `image` too when the time runs out, until `cancel()`. libvips notices a kill when
    /// it next prepares a region of the killed image: watching the loader's image as well as
    /// the rendered one stops a decode within a strip of input, even when the whole output is
    /// only a strip or two (a large image shrunk to a thumbnail).
    public func watch(_ image: VipsImage) {
        hold(image)
    }

    /// Runs `body` on a copy of `image` (no pixels copied) watched meanwhile, as `watch(_:)`
    /// watches: work that reads an image already in memory, such as an encoder's, stops when the
    /// time runs out. A copy of its own, since libvips clears a kill once it notices it: work on
    /// the same image elsewhere (another output's encoder) would take it first.
    public func watching<Result>(_ image: VipsImage, _ body: (VipsImage) throws -> Result) throws -> Result {
        let own = try image.privateCopy()
        hold(own)
        defer { release(own) }
        return try body(own)
    }

    /// Computes every pixel of `image` now, into memory, unless the deadline passes first.
    public func render(_ image: VipsImage) throws(VipsError) -> VipsImage {
        let expired = hold(image)
        defer { release(image) }
        if expired {
            throw VipsError(operation: "deadline", message: "the time limit of \(seconds) s has passed")
        }
        return try image.rendered()
    }

    /// Counts `image` as watched, here and by the outer deadline (a finished deadline watches
    /// nothing); true when either has expired, its kill then set.
    @discardableResult
    private func hold(_ image: VipsImage) -> Bool {
        expireIfPastLimit()
        let (held, expired) = state.withLock { state -> (Bool, Bool) in
            guard !state.finished else { return (false, state.expired) }
            state.watched[ObjectIdentifier(image), default: (image, 0)].count += 1
            if state.expired { pl_set_kill(image.pointer, 1) }
            return (true, state.expired)
        }
        guard held, let outer else { return expired }
        return outer.hold(image) || expired
    }

    /// Undoes one `hold(image)`, here and by the outer deadline.
    private func release(_ image: VipsImage) {
        let id = ObjectIdentifier(image)
        let held = state.withLock { state -> Bool in
            guard let entry = state.watched[id] else { return false }
            if entry.count > 1 {
                state.watched[id]?.count -= 1
            } else {
                state.watched[id] = nil
                // A kill that landed just after the work finished must not linger on the image.
                pl_set_kill(image.pointer, 0)
            }
            return true
        }
        if held { outer?.release(image) }
    }

    /// Where a deadline reads the time.
    public struct Clock: Sendable {
        /// Seconds since a fixed point; never goes back.
        public let now: @Sendable () -> Double

        /// A clock that reads the time from `now`.
        public init(now: @escaping @Sendable () -> Double) {
            self.now = now
        }

        /// The system's monotonic clock.
        public static let uptime = Clock { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

        /// The monotonic clock less the time the process spent stopped (SIGSTOP, Ctrl-Z,
        /// `docker pause`), each stop of two seconds or more: a limit bounds work, and a
        /// stopped process does none.
        public static let running = Clock { StoppedTime.shared.runningTime() }
    }

    /// A queue of its own: the global queues' threads may all be busy with the very libvips
    /// work a deadline has to stop (stage queues run on them), and a serial queue made here
    /// gets a thread even then.
    private static let queue = DispatchQueue(label: "vips.deadline")

    /// Expires now if the limit has passed by the clock, whether or not the timer has fired.
    private func expireIfPastLimit() {
        guard timer != nil else { return }
        if clock.now() - started >= seconds { expire() }
    }

    /// The timer is set by the monotonic clock, which runs on while the process is stopped: it
    /// expires the deadline only when `clock` agrees, and otherwise is set again for what is left.
    private func timerFired() {
        let left = seconds - (clock.now() - started)
        if left > 0 {
            timer?.schedule(deadline: .now() + left)
        } else {
            expire()
        }
    }

    private func expire() {
        state.withLock { state in
            guard !state.finished, !state.expired else { return }
            state.expired = true
            for entry in state.watched.values { pl_set_kill(entry.image.pointer, 1) }
        }
    }
}
