import Foundation

/// A value that several threads share, behind a lock: the one lock type of every module in
/// this package (it lives here, in the lowest Swift layer, so `Vips` can use it too). A thread
/// that is not on Swift's cooperative pool may also block until the value is as it needs
/// (`withLock(waitingUntil:_:)`); tasks wait with `WaitingRoom` instead, which blocks no thread.
///
/// Foundation's `NSCondition` (a pthread mutex and condition variable) rather than
/// `Synchronization.Mutex`: ThreadSanitizer understands pthread locks, while on Linux it reports
/// accesses under `Mutex`'s futex-based lock as races (seen in this test suite), and the suite
/// must pass under `--sanitize=thread`.
package final class Locked<Value>: @unchecked Sendable {
    // Only touched with `condition` locked.
    private var value: Value
    private let condition = NSCondition()

    /// A lock around `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Blocks the calling thread until `ready` holds for the value, then runs `body` with it in
    /// the same hold of the lock. `ready` is checked again each time another thread calls
    /// `wakeWaiters()`, so whoever changes what `ready` looks at must call it.
    package func withLock<Result>(waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws -> Result) rethrows -> Result {
        try withLock(waitingUntil: ready, orUntil: nil) { value, _ in try body(&value) }
    }

    /// As `withLock(waitingUntil:_:)`, waiting no later than `deadline` (nil: without end):
    /// `body` is handed whether `ready` holds, false when the wait ran out first.
    package func withLock<Result>(
        waitingUntil ready: (Value) -> Bool, orUntil deadline: Date?, _ body: (inout Value, Bool) throws -> Result
    ) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(value) {
            // Foundation on Linux faults waiting until `Date.distantFuture`: no end is waited for untimed.
            guard let deadline else {
                condition.wait()
                continue
            }
            guard condition.wait(until: deadline) else { break }
        }
        return try body(&value, ready(value))
    }

    /// Wakes the threads waiting in `withLock(waitingUntil:_:)` to look at the value again: call
    /// it after a change they may be waiting for (outside the lock, a waiter either saw the
    /// change or is already waiting, so the wake-up is never lost).
    package func wakeWaiters() {
        condition.broadcast()
    }
}
