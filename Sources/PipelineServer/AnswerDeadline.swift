#if Server
import Foundation
import PipelineKit

/// When a request for a file or an input's info must be answered (`serve.timeout` after it
/// came): a run, a read, or a bucket, that takes longer is a passing state for the client, 503
/// with `Retry-After`, while the run goes on and puts its file where a later request finds it.
/// Each fetch and store request has its own timeout and retries, which together may run to minutes.
struct AnswerDeadline: Sendable {
    /// The moment past which the request is refused.
    let instant: ContinuousClock.Instant
    /// `serve.timeout`, for the refusal's words.
    let seconds: Double

    /// The deadline `seconds` from now.
    init(seconds: Double) {
        self.seconds = seconds
        instant = .now + .seconds(seconds)
    }

    /// Whether the moment has come.
    var hasPassed: Bool { ContinuousClock.now >= instant }

    /// The refusal once the deadline has passed.
    var refusal: ServeError { .tryAgain("not ready within serve.timeout (\(Units.text(seconds: seconds))); try again") }

    /// What `work` gives, or nil when the deadline passes first (or the calling task is
    /// cancelled). `work` runs as a task of its own and is cancelled then; it may go on for a
    /// while (a `/info` read on its lane), which no one waits for.
    func bound<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) async -> Value? {
        let room = WaitingRoom<Done<Value>?, Void, Value?>(nil)
        let working = Task {
            let value = await work()
            room.withLock { state, waiters in
                state = Done(value: value)
                waiters.letOutAll(with: value)
            }
        }
        let timer = Task { [instant] in
            try? await Task.sleep(until: instant, clock: .continuous)
            room.withLock { _, waiters in waiters.letOutAll(with: nil) }
            working.cancel()
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await room.wait((), cancellation: .init(nil)) { [instant] state, waiters in
                if let done = state {
                    waiters.letOutAll(with: done.value)
                } else if ContinuousClock.now >= instant {
                    waiters.letOutAll(with: nil)
                }
            }
        } onCancel: {
            working.cancel()
        }
    }

    /// The value `work` ended with, which may itself be nil.
    private struct Done<Value: Sendable>: Sendable {
        let value: Value
    }
}
#endif
