#if Server
import PipelineKit
import Vips

/// What the `InputMaker` of every plan the server has had shares: the places of runs and `/info`
/// reads going or waiting, the lanes runs go on, and the last run started for each source,
/// which the next run for that source waits for. A reload (SIGHUP, or a change in the inputs'
/// folders) while runs go then neither lets more runs go at once than `inFlight` allows, nor
/// more wait than `serve.maxQueue`, nor lets two runs for one source overlap: a request after
/// it waits for the run an earlier plan has going for its source, and finds that run's files up
/// to date, which its input's manifest entry then names with its own.
final class RunTurns: Sendable {
    /// Runs and reads going or waiting, of every plan.
    private let admitted = Locked(0)
    /// Runs going now, and the jobs waiting for a lane, first come first served.
    private let lanes = WaitingRoom<Int, Void, Void>(0)
    /// The end of the last run started for each source, by the bytes of its path or URL: names
    /// that differ only in their Unicode form are two sources.
    private let lastRun = Locked<[DiskPath: RunEnd]>([:])

    /// A run for `source` that ends at `end` is the last one now: the end of the one before it,
    /// which it is to wait for, or nil.
    func follow(_ source: String, ending end: RunEnd) -> RunEnd? {
        lastRun.withLock { last in
            defer { last[DiskPath(source)] = end }
            return last[DiskPath(source)]
        }
    }

    /// The run for `source` that ends at `end` has ended: the next one for it need not wait.
    func ended(_ source: String, at end: RunEnd) {
        lastRun.withLock { last in
            if last[DiskPath(source)] === end { last[DiskPath(source)] = nil }
        }
    }

    /// Takes a place for a run or read when fewer than `limit` (the lanes and the queue the
    /// caller's plan allows) are taken; whether it did. Each place taken is given back once
    /// (`release()`).
    func admit(within limit: Int) -> Bool {
        admitted.withLock { taken in
            guard taken < limit else { return false }
            taken += 1
            return true
        }
    }

    /// Gives back a place `admit(within:)` took.
    func release() {
        admitted.withLock { $0 -= 1 }
    }

    /// Waits for a lane: one of `limit`, the number the caller's plan allows.
    func takeLane(limit: Int) async {
        await lanes.wait(()) { going, waiting in
            // Only this job waits when a lane is free: `leaveLane` hands lanes to those waiting.
            if going < limit {
                going += 1
                waiting.letOutFirst(with: ())
            }
        }
    }

    /// Gives a lane back, to the first job waiting when there is one.
    func leaveLane() {
        lanes.withLock { going, waiting in
            // The lane is handed over, counted already.
            if waiting.isEmpty { going -= 1 } else { waiting.letOutFirst(with: ()) }
        }
    }

    /// Runs going now, and those waiting, of every plan: the places taken past the lanes, which
    /// `serve.maxQueue` bounds, whether a run waits for a lane or for the run before it for its source.
    var counts: (going: Int, waiting: Int) {
        let going = lanes.withLock { going, _ in going }
        return (going, max(0, admitted.withLock { $0 } - going))
    }
}

/// The end of one run: its reports once it has ended (nil before), and the requests (and the
/// next run for its source) waiting for them.
final class RunEnd: Sendable {
    private let room = WaitingRoom<[ItemReport]?, Void, [ItemReport]?>(nil)

    /// The run's reports; nil when the calling task was cancelled first.
    func reports() async -> [ItemReport]? {
        await room.wait((), cancellation: .init(nil)) { reports, waiters in
            if let reports { waiters.letOutAll(with: reports) }
        }
    }

    /// Ends the run with `reports`, letting everyone waiting go. Returns whether anyone waited.
    func end(with reports: [ItemReport]) -> Bool {
        room.withLock { state, waiters in
            defer { waiters.letOutAll(with: reports) }
            state = reports
            return !waiters.isEmpty
        }
    }
}
#endif
