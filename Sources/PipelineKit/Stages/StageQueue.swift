import Dispatch
import Vips

/// One stage's bounded lanes, bridged to async callers: work runs in the order it was asked
/// for, on the first free lane, at most `concurrency` at once.
///
/// libvips, file and network work blocks its thread, so it must never run on Swift's
/// cooperative pool: it runs on a lane's Dispatch queue, and the awaiting task is let out of the
/// stage's waiting room (`WaitingRoom`) with the result. The lanes run on one of two kinds of
/// thread (`Threads`):
///
/// - Stages that wait (fetch and cache: the network, the disk) give each lane a serial
///   dispatch queue of its own, so a lane has a thread whenever it has work. Dispatch's shared
///   pool on Linux starts a thread per core and adds threads for blocked ones only slowly, so
///   waiting lanes there would run a few at once, behind the decodes.
/// - Stages that compute (decompress, process, encode) share that pool: the lanes bound each
///   stage, and the pool's thread per core bounds them together. Threads of their own, or a
///   lane per core on the pool, ran no faster and raised the peak memory
///   (`Benchmarks/RESULTS.md` has the measurements).
final class StageQueue: Sendable {
    let stage: Stage
    /// The Dispatch queue each lane's work runs on: a serial one per lane (`.ownPerLane`), or
    /// the shared pool for every lane (`.sharedPerCore`).
    private let lanes: [DispatchQueue]
    private let clock: RunClock
    private let record: @Sendable (StageOperation) -> Void
    /// Queued, running and done counts and which lanes are busy; the work waiting for a lane,
    /// oldest first, each with its caller waiting to be let out (true: it ran).
    private let room: WaitingRoom<State, Job, Bool>

    /// A caller's work, run on the lane it is given; it frees its lanes (`free(_:exclusive:)`)
    /// when done. An exclusive job holds every lane while it runs.
    private struct Job: Sendable {
        let exclusive: Bool
        let body: @Sendable (_ lane: Int) -> Void
    }

    private struct State: Sendable {
        var counts = StageCounts()
        var busyLanes: [Bool]

        /// Moves one operation from queued to running and gives it the lowest free lane, if any
        /// (every lane, all free, for an exclusive one).
        mutating func takeLane(exclusive: Bool) -> Int? {
            if exclusive {
                guard !busyLanes.contains(true) else { return nil }
            }
            guard let lane = busyLanes.firstIndex(of: false) else { return nil }
            counts.queued -= 1
            counts.running += 1
            if exclusive {
                busyLanes = busyLanes.map { _ in true }
            } else {
                busyLanes[lane] = true
            }
            return lane
        }
    }

    /// Work cancelled while it waits for a lane leaves the queue counted as done, unrun. Work
    /// behind it starts when a lane is next freed: exclusive work at the head waits only while
    /// another runs, whose end looks again.
    private static let skipped = WaitingRoom<State, Job, Bool>.Cancellation(false) { state, _ in
        state.counts.queued -= 1
        state.counts.done += 1
    }

    /// Where a stage's lanes run.
    enum Threads: Sendable {
        /// Each lane on a thread of its own, for work that waits.
        case ownPerLane
        /// On libdispatch's shared pool, a thread per core, for work that computes.
        case sharedPerCore
    }

    init(
        stage: Stage, concurrency: Int, threads: Threads = .sharedPerCore, clock: RunClock,
        record: @escaping @Sendable (StageOperation) -> Void
    ) {
        self.stage = stage
        self.clock = clock
        self.record = record
        let width = max(1, concurrency)
        room = WaitingRoom(State(busyLanes: Array(repeating: false, count: width)))
        switch threads {
        case .ownPerLane:
            lanes = (0..<width).map { lane in
                DispatchQueue(label: "pipeline.\(stage.rawValue).\(lane)", qos: .userInitiated)
            }
        case .sharedPerCore:
            lanes = Array(repeating: .global(qos: .userInitiated), count: width)
        }
    }

    /// The stage's counts now.
    var counts: StageCounts { room.withLock { state, _ in state.counts } }

    /// Runs `work` on one of the stage's lanes for `input` (and `output`). If the calling task
    /// is cancelled while the work is still queued, the work is skipped and this throws
    /// `CancellationError`; work already running finishes. `exclusive` work waits until every
    /// lane is free and runs with the others held: nothing else of the stage runs beside it, and
    /// work asked for after it waits behind it.
    func run<Result: Sendable>(
        for input: String, output: String? = nil, exclusive: Bool = false, notes: ProcessingNotes? = nil,
        _ work: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try await run(for: input, output: output, exclusive: exclusive, notes: notes) { _ in try work() }
    }

    /// Like `run(for:output:notes:_:)`, for long work that checks `isCancelled` to stop early (a
    /// download, a wait).
    func run<Result: Sendable>(
        for input: String, output: String? = nil, exclusive: Bool = false, notes: ProcessingNotes? = nil,
        _ work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> Result
    ) async throws -> Result {
        try Task.checkCancellation()
        let cancelled = CancellationFlag()
        let queuedAt = clock.now
        // Set on the lane before the caller is let out.
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        let job = Job(exclusive: exclusive) { [self] lane in
            let startedAt = clock.now
            let result = Swift.Result { try work { cancelled.isSet } }
            let endedAt = clock.now
            free(lane, exclusive: exclusive)
            let succeeded = if case .success = result { true } else { false }
            record(
                StageOperation(
                    stage: stage, input: input, output: output, queuedAt: queuedAt,
                    startedAt: startedAt, endedAt: endedAt, lane: lane, succeeded: succeeded,
                    notes: notes.map(\.all).flatMap { $0.isEmpty ? nil : $0 }))
            outcome.withLock { $0 = result }
        }
        let ran = await withTaskCancellationHandler {
            await room.wait(job, cancellation: Self.skipped) { [self] state, waiters in
                state.counts.queued += 1
                startWaiting(&state, &waiters)
            }
        } onCancel: {
            // Work already on a lane sees this through `isCancelled`.
            cancelled.set()
        }
        guard ran, let result = outcome.withLock({ $0 }) else { throw CancellationError() }
        return try result.get()
    }

    /// Hands waiting work to free lanes, oldest first. Each lane, once its work is done, lets
    /// its caller out and looks again.
    private func startWaiting(_ state: inout State, _ waiters: inout WaitingRoom<State, Job, Bool>.Waiters) {
        while !waiters.isEmpty, let lane = state.takeLane(exclusive: waiters[0].exclusive), let waiter = waiters.takeFirst() {
            lanes[lane].async { [self] in
                waiter.ticket.body(lane)
                waiter.letGo(with: true)
                room.withLock { state, waiters in startWaiting(&state, &waiters) }
            }
        }
    }

    /// Counts the work on `lane` done and frees the lane (every lane, for exclusive work).
    private func free(_ lane: Int, exclusive: Bool) {
        room.withLock { state, _ in
            state.counts.running -= 1
            state.counts.done += 1
            if exclusive {
                state.busyLanes = state.busyLanes.map { _ in false }
            } else {
                state.busyLanes[lane] = false
            }
        }
    }
}

/// Seconds since a run started, for stage timings.
struct RunClock: Sendable {
    private let start = ContinuousClock.now

    var now: Double {
        (ContinuousClock.now - start).seconds
    }
}
