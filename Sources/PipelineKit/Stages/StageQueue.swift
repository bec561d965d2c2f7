import Foundation
import Vips

/// One stage's bounded lanes, bridged to async callers: work runs in the order it was asked
/// for, on the first free lane, at most `concurrency` at once.
///
/// libvips, file and network work blocks its thread, so it must never run on Swift's
/// cooperative pool: it runs here, and the awaiting task is resumed with the result. The lanes
/// run on one of two kinds of thread (`Threads`):
///
/// - Stages that wait (fetch and cache: the network, the disk) give each lane a serial
///   dispatch queue of its own, so a lane has a thread whenever it has work. On libdispatch's
///   shared pool (where an `OperationQueue` runs its operations) they did not: on Linux it
///   starts one thread per core and adds threads for blocked ones about one a second, so four
///   fetch lanes ran two downloads at once on two cores, behind the decodes (sixteen 0.3 s
///   waits on eight lanes took 2.1 s, not 0.6 s).
/// - Stages that compute (decompress, process, encode) share that pool, through one
///   `OperationQueue` as wide as the stage: the width bounds each stage, and the pool's thread
///   per core bounds them together. Measured with `Benchmarks/run.sh`: with threads of their
///   own, or as lanes of width one on the pool, the standard job ran no faster and its peak
///   memory rose from 150–166 MiB to 178–196 MiB (to 238 MiB over the corpus eight times).
final class StageQueue: Sendable {
    let stage: Stage
    /// `.sharedPerCore`: the stage's one queue, as wide as the stage.
    private let shared: OperationQueue?
    /// `.ownPerLane`: a serial dispatch queue per lane.
    private let lanes: [DispatchQueue]
    private let clock: RunClock
    private let record: @Sendable (StageOperation) -> Void
    /// Queued, running and done counts, which lanes are busy, and the work waiting for a lane.
    private let state: Locked<State>

    private struct State {
        var counts = StageCounts()
        var busyLanes: [Bool]
        /// Work waiting for a lane, oldest first (`.ownPerLane`; a few per input in flight).
        var waiting: [@Sendable (Int) -> Void] = []

        /// The next waiting work and the lane it takes, if a lane is free (`.ownPerLane`).
        mutating func next() -> (work: @Sendable (Int) -> Void, lane: Int)? {
            guard !waiting.isEmpty, busyLanes.contains(false) else { return nil }
            return (waiting.removeFirst(), takeLane())
        }

        /// Moves one operation from queued to running and gives it the lowest free lane (the
        /// shared queue's width guarantees one).
        mutating func takeLane() -> Int {
            counts.queued -= 1
            counts.running += 1
            let lane = busyLanes.firstIndex(of: false) ?? 0
            if busyLanes.indices.contains(lane) { busyLanes[lane] = true }
            return lane
        }
    }

    /// Where a stage's lanes run.
    enum Threads: Sendable {
        /// Each lane on a thread of its own, for work that waits.
        case ownPerLane
        /// On libdispatch's shared pool, a thread per core, for work that computes.
        case sharedPerCore
    }

    init(stage: Stage, concurrency: Int, threads: Threads = .sharedPerCore, clock: RunClock,
         record: @escaping @Sendable (StageOperation) -> Void) {
        self.stage = stage
        self.clock = clock
        self.record = record
        state = Locked(State(busyLanes: Array(repeating: false, count: max(1, concurrency))))
        guard threads == .ownPerLane else {
            let queue = OperationQueue()
            queue.name = "pipeline.\(stage.rawValue)"
            queue.maxConcurrentOperationCount = max(1, concurrency)
            queue.qualityOfService = .userInitiated
            shared = queue
            lanes = []
            return
        }
        shared = nil
        lanes = (0..<max(1, concurrency)).map { lane in
            DispatchQueue(label: "pipeline.\(stage.rawValue).\(lane)", qos: .userInitiated)
        }
    }

    /// The stage's counts now.
    var counts: StageCounts { state.withLock { $0.counts } }

    /// Runs `work` on one of the stage's lanes for `input` (and `output`). If the calling task
    /// is cancelled while the work is still queued, the work is skipped and this throws
    /// `CancellationError`; work already running finishes.
    func run<Result: Sendable>(for input: String, output: String? = nil, _ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await run(for: input, output: output) { _ in try work() }
    }

    /// Like `run(for:output:_:)`, for long work that checks `isCancelled` to stop early (a
    /// download, a wait).
    func run<Result: Sendable>(
        for input: String, output: String? = nil,
        _ work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> Result
    ) async throws -> Result {
        try Task.checkCancellation()
        let cancelled = CancellationFlag()
        let queuedAt = clock.now
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                enqueue { [self] lane in
                    guard !cancelled.isSet else {
                        free(lane)
                        return continuation.resume(throwing: CancellationError())
                    }
                    let startedAt = clock.now
                    let result = Swift.Result { try work { cancelled.isSet } }
                    let endedAt = clock.now
                    free(lane)
                    let succeeded = if case .success = result { true } else { false }
                    record(StageOperation(stage: stage, input: input, output: output, queuedAt: queuedAt,
                                          startedAt: startedAt, endedAt: endedAt, lane: lane, succeeded: succeeded))
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Queues `work`, which frees its lane (`free(_:)`) before its caller resumes, and starts
    /// what the free lanes can take.
    private func enqueue(_ work: @escaping @Sendable (Int) -> Void) {
        if let shared {
            state.withLock { $0.counts.queued += 1 }
            shared.addOperation { [self] in
                work(state.withLock { $0.takeLane() })
            }
            return
        }
        state.withLock { state in
            state.waiting.append(work)
            state.counts.queued += 1
        }
        startWaiting()
    }

    /// Hands waiting work to free lanes, oldest first; each piece of work frees its lane
    /// (`free(_:)`) before its caller resumes, and the lane then looks again.
    private func startWaiting() {
        while let (work, lane) = state.withLock({ $0.next() }) {
            lanes[lane].async { [self] in
                work(lane)
                startWaiting()
            }
        }
    }

    /// Counts the work on `lane` done and frees the lane.
    private func free(_ lane: Int) {
        state.withLock { state in
            state.counts.running -= 1
            state.counts.done += 1
            if state.busyLanes.indices.contains(lane) { state.busyLanes[lane] = false }
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
