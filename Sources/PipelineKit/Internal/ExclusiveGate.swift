import Foundation
import Vips

/// Lets many callers through at once, or one caller alone: a readers–writer gate in which a
/// waiting exclusive caller holds new shared callers back, so it is never starved.
///
/// The decoder runs every decode shared and re-runs a failed one exclusively, so that libvips'
/// process-wide error buffer holds only that input's reason while it is read.
///
/// Its callers are libvips lanes, threads outside Swift's cooperative pool that block anyway, so
/// a caller waits by blocking its thread (`Locked.withLock(waitingUntil:_:)`).
final class ExclusiveGate: Sendable {
    private struct State {
        var sharedCount = 0
        var exclusiveRunning = false
        var exclusiveWaiting = 0
    }

    private let state = Locked(State())

    /// Runs `body` beside other shared callers, once no exclusive caller runs or waits.
    func shared<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        state.withLock(waitingUntil: { !$0.exclusiveRunning && $0.exclusiveWaiting == 0 }, { $0.sharedCount += 1 })
        defer {
            state.withLock { $0.sharedCount -= 1 }
            state.wakeWaiters()
        }
        return try body()
    }

    /// Runs `body` alone, once the shared callers already in have left.
    func exclusive<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        // Waiting without end, `exclusive(waitingUntil:_:)` always runs `body`.
        try exclusive(waitingUntil: nil, body)!
    }

    /// Runs `body` alone, once the shared callers already in have left; nil, without running
    /// it, when they have not left by `deadline` (a read that never ends, such as an SVG
    /// drawing without end, would hold every later caller back for good); nil waits without end.
    func exclusive<Result, Failure: Error>(waitingUntil deadline: Date?, _ body: () throws(Failure) -> Result) throws(Failure)
        -> Result?
    {
        state.withLock { $0.exclusiveWaiting += 1 }
        let entered = state.withLock(
            waitingUntil: { !$0.exclusiveRunning && $0.sharedCount == 0 }, orUntil: deadline,
            { state, ready in
                state.exclusiveWaiting -= 1
                if ready { state.exclusiveRunning = true }
                return ready
            })
        guard entered else {
            // The shared callers it held back may go on.
            state.wakeWaiters()
            return nil
        }
        defer {
            state.withLock { $0.exclusiveRunning = false }
            state.wakeWaiters()
        }
        return try body()
    }
}
