import Dispatch

/// The monotonic clock less the time the process spent stopped (SIGSTOP, Ctrl-Z, a frozen
/// container, a suspended machine): a time limit bounds the work, and a process that is not
/// running does none. Linux has no clock that leaves stops out, so a heartbeat finds them: a
/// beat that comes much later than it was due means nothing of the process ran meanwhile. Not a
/// signal handler for SIGCONT: a frozen cgroup (`docker pause`) sends none.
package final class StoppedTime: Sendable {
    private struct State {
        /// When the last beat came, by the monotonic clock.
        var lastBeat: Double
        /// The stops found so far, in seconds.
        var stopped: Double
    }

    /// How late a beat may come before the gap counts as a stop: longer than a busy machine
    /// keeps a thread from a core, so only a stop extends a limit. A stop shorter than this
    /// counts as running time.
    package let grace: Double
    /// How often the beats come, when the process runs.
    package let beatInterval: Double
    /// The monotonic clock.
    private let uptime: @Sendable () -> Double
    private let state: Locked<State>
    /// Dispatch sources are thread-safe (their methods may be called from any thread), which
    /// the compiler cannot see through the protocol.
    private nonisolated(unsafe) let heartbeat: (any DispatchSourceTimer)?

    /// Counts stops against `uptime`, from now, beating every `beatInterval` seconds on a queue
    /// of its own (so that its beats are not held up behind other work) until it is freed; a
    /// test that calls `beat()` itself passes `beatsItself: false`.
    package init(grace: Double, beatInterval: Double, beatsItself: Bool = true, uptime: @escaping @Sendable () -> Double) {
        self.grace = grace
        self.beatInterval = beatInterval
        self.uptime = uptime
        state = Locked(State(lastBeat: uptime(), stopped: 0))
        guard beatsItself else {
            heartbeat = nil
            return
        }
        let heartbeat = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "vips.stopped-time"))
        self.heartbeat = heartbeat
        heartbeat.schedule(deadline: .now() + beatInterval, repeating: beatInterval)
        heartbeat.setEventHandler { [weak self] in self?.beat() }
        heartbeat.activate()
    }

    deinit {
        heartbeat?.cancel()
    }

    /// The monotonic time less every stop, the one still under way included. A stop counts
    /// whole (less a beat's interval) once it has lasted `grace`: read then, the time steps
    /// back by what it had counted of the stop until it knew it was one.
    package func runningTime() -> Double {
        state.withLock { state in
            let now = uptime()
            return now - state.stopped - stop(from: state.lastBeat, to: now)
        }
    }

    /// Notes that the process runs now, counting the time since the last beat as a stop when
    /// it is longer than `grace`.
    package func beat() {
        state.withLock { state in
            let now = uptime()
            state.stopped += stop(from: state.lastBeat, to: now)
            state.lastBeat = now
        }
    }

    /// The part of the time from a beat to `now` the process was stopped: all of it but a
    /// beat's interval, when it is longer than `grace`; else none.
    private func stop(from beat: Double, to now: Double) -> Double {
        now - beat > grace ? now - beat - beatInterval : 0
    }

    /// The process's own, beating four times a second from its first use on: a wake-up too
    /// few to cost anything.
    static let shared = StoppedTime(grace: 2, beatInterval: 0.25, uptime: VipsDeadline.Clock.uptime.now)
}
