#if Server
import Foundation

/// When a request for a file must be answered (`serve.timeout` after it came): a run, or a
/// bucket, that takes longer is a passing state for the client, 503 with `Retry-After`, while
/// the run goes on and puts its file where a later request finds it. Each fetch and store
/// request has its own timeout and retries, which together may run to minutes.
struct AnswerDeadline: Sendable {
    /// The moment past which the request is refused.
    let instant: ContinuousClock.Instant
    /// `serve.timeout`, for the refusal's words.
    let seconds: Int

    /// The deadline `seconds` from now.
    init(seconds: Int) {
        self.seconds = seconds
        instant = .now + .seconds(seconds)
    }

    /// Whether the moment has come.
    var hasPassed: Bool { ContinuousClock.now >= instant }

    /// The refusal once the deadline has passed.
    var refusal: ServeError { .tryAgain("the file was not ready within serve.timeout (\(seconds) s); try again") }

    /// What `work` gives, or nil when the deadline passes first. `work` is then cancelled, and
    /// must end as soon as it is (a wait for a run does; the run goes on).
    func bound<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) async -> Value? {
        await withTaskGroup(of: Value?.self) { group in
            group.addTask { await work() }
            group.addTask { [instant] in
                try? await Task.sleep(until: instant, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }
}
#endif
