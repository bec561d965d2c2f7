import Foundation

/// A value that several threads share, behind a lock: the one lock type of every module in
/// this package (it lives here, in the lowest Swift layer, so `Vips` can use it too).
///
/// Foundation's `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: ThreadSanitizer
/// understands pthread locks, while on Linux it reports accesses under `Mutex`'s futex-based
/// lock as races (seen in this test suite), and the suite must pass under `--sanitize=thread`.
package final class Locked<Value>: @unchecked Sendable {
    // Only touched inside `withLock`.
    private var value: Value
    private let lock = NSLock()

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
