import Foundation

/// One stage's bounded `OperationQueue`, bridged to async callers.
///
/// libvips and file work blocks its thread, so it must never run on Swift's cooperative pool:
/// it runs here, and the awaiting task is resumed with the result. The queue's width is the
/// stage's `concurrency` from the pipeline file.
final class StageQueue: Sendable {
    let stage: Stage
    private let queue: OperationQueue

    init(stage: Stage, concurrency: Int) {
        self.stage = stage
        queue = OperationQueue()
        queue.name = "pipeline.\(stage.rawValue)"
        queue.maxConcurrentOperationCount = concurrency
        queue.qualityOfService = .userInitiated
    }

    /// Runs `work` on the stage's queue. If the calling task is cancelled while the work is
    /// still queued, the work is skipped and this throws `CancellationError`; work already
    /// running finishes.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await run { _ in try work() }
    }

    /// Like `run(_:)`, for long work that checks `isCancelled` to stop early (a download, a wait).
    func run<Result: Sendable>(
        _ work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> Result
    ) async throws -> Result {
        try Task.checkCancellation()
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                queue.addOperation {
                    guard !cancelled.isSet else { return continuation.resume(throwing: CancellationError()) }
                    continuation.resume(with: Swift.Result { try work { cancelled.isSet } })
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }
}
