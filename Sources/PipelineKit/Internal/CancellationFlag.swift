import Vips

/// A flag set from a task's cancellation handler and read by work on a Dispatch queue (a stage
/// lane), which has no task to ask.
package final class CancellationFlag: Sendable {
    private let state = Locked(false)

    /// Creates a flag not yet set.
    package init() {}

    /// Whether it has been set.
    package var isSet: Bool { state.withLock { $0 } }

    /// Sets it, for good.
    package func set() { state.withLock { $0 = true } }
}
