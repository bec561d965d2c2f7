import Foundation

/// Lets many callers through at once, or one caller alone: a readers–writer gate in which a
/// waiting exclusive caller holds new shared callers back, so it is never starved.
///
/// The decoder runs every decode shared and re-runs a failed one exclusively, so that libvips'
/// process-wide error buffer holds only that input's reason while it is read.
final class ExclusiveGate: @unchecked Sendable {
    // All three counters are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var sharedCount = 0
    private var exclusiveRunning = false
    private var exclusiveWaiting = 0

    func shared<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        while exclusiveRunning || exclusiveWaiting > 0 { condition.wait() }
        sharedCount += 1
        condition.unlock()
        defer {
            condition.lock()
            sharedCount -= 1
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    func exclusive<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        exclusiveWaiting += 1
        while exclusiveRunning || sharedCount > 0 { condition.wait() }
        exclusiveWaiting -= 1
        exclusiveRunning = true
        condition.unlock()
        defer {
            condition.lock()
            exclusiveRunning = false
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}
