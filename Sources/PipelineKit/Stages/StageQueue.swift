import Foundation
import Vips

/// One stage's bounded `OperationQueue`, bridged to async callers.
///
/// libvips and file work blocks its thread, so it must never run on Swift's cooperative pool:
/// it runs here, and the awaiting task is resumed with the result. The queue's width is the
/// stage's `concurrency` from the pipeline file.
final class StageQueue: Sendable {
    let stage: Stage
    private let queue: OperationQueue
    private let clock: RunClock
    private let record: @Sendable (StageOperation) -> Void
    /// Queued, running and done counts, and which lanes are busy.
    private let state: Locked<(counts: StageCounts, busyLanes: [Bool])>

    init(stage: Stage, concurrency: Int, clock: RunClock, record: @escaping @Sendable (StageOperation) -> Void) {
        self.stage = stage
        self.clock = clock
        self.record = record
        state = Locked((StageCounts(), Array(repeating: false, count: concurrency)))
        queue = OperationQueue()
        queue.name = "pipeline.\(stage.rawValue)"
        queue.maxConcurrentOperationCount = concurrency
        queue.qualityOfService = .userInitiated
    }

    /// The stage's counts now.
    var counts: StageCounts { state.withLock { $0.counts } }

    /// Runs `work` on the stage's queue for `input` (and `output`). If the calling task is
    /// cancelled while the work is still queued, the work is skipped and this throws
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
        state.withLock { $0.counts.queued += 1 }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                queue.addOperation { [self] in
                    let lane = begin()
                    guard !cancelled.isSet else {
                        end(lane: lane)
                        return continuation.resume(throwing: CancellationError())
                    }
                    let startedAt = clock.now
                    let result = Swift.Result { try work { cancelled.isSet } }
                    let endedAt = clock.now
                    end(lane: lane)
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

    /// Moves one operation from queued to running and gives it the lowest free lane.
    private func begin() -> Int {
        state.withLock { state in
            state.counts.queued -= 1
            state.counts.running += 1
            let lane = state.busyLanes.firstIndex(of: false) ?? 0
            if state.busyLanes.indices.contains(lane) { state.busyLanes[lane] = true }
            return lane
        }
    }

    private func end(lane: Int) {
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
