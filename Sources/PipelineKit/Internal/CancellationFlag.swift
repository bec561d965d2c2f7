import Vips

/// A flag set from a task's cancellation handler and read by work on a Dispatch queue (a stage
/// lane), which has no task to ask.
final class CancellationFlag: Sendable {
    private let state = Locked(false)

    var isSet: Bool { state.withLock { $0 } }

    func set() { state.withLock { $0 = true } }
}
