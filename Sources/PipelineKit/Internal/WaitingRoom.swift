import Dispatch
import Vips

/// State behind a lock and the tasks waiting on it, first come first served: the one way a task
/// in this package waits for other tasks or threads (the stage lanes, the committer, the in-flight
/// window, memory admission, the watcher, the server's lanes) and the only place that keeps
/// continuations.
///
/// A waiter arrives with a ticket (what it asks for) and leaves with a value. Whoever changes the
/// state decides, under the same lock, who leaves and with what (`withLock`), so a change can never
/// slip between a waiter looking at the state and joining the queue: no wake-up is lost. Waiters
/// are resumed after the lock is released, never under it.
///
/// A waiter whose task is cancelled leaves the queue at once when the wait says what it then
/// leaves with (`Cancellation`); other waits ignore cancellation and end only when let out.
package final class WaitingRoom<State: Sendable, Ticket: Sendable, Value: Sendable>: Sendable {
    /// The waiters, oldest first, as the owner sees them under the lock.
    package struct Waiters {
        fileprivate struct Entry {
            let id: UInt64
            let ticket: Ticket
            let continuation: CheckedContinuation<Value, Never>
        }

        fileprivate var entries: [Entry] = []
        /// Let out under the lock, resumed once it is released.
        fileprivate var leaving: [(CheckedContinuation<Value, Never>, Value)] = []
        fileprivate var lastID: UInt64 = 0

        /// How many wait.
        package var count: Int { entries.count }
        /// Whether nobody waits.
        package var isEmpty: Bool { entries.isEmpty }
        /// The ticket of the waiter at `position` (0 is the oldest).
        subscript(position: Int) -> Ticket { entries[position].ticket }

        /// Lets the waiter at `position` out with `value`.
        mutating func letOut(at position: Int, with value: Value) {
            let entry = entries.remove(at: position)
            leaving.append((entry.continuation, value))
        }

        /// Lets the oldest waiter out with `value`.
        package mutating func letOutFirst(with value: Value) {
            letOut(at: 0, with: value)
        }

        /// Lets every waiter out with `value`.
        package mutating func letOutAll(with value: Value) {
            leaving += entries.map { ($0.continuation, value) }
            entries = []
        }

        /// Takes the oldest waiter out of the queue, for the caller to let go later, off the lock
        /// (`Waiter.letGo(with:)`): its value is not known yet.
        mutating func takeFirst() -> Waiter? {
            guard !entries.isEmpty else { return nil }
            let entry = entries.removeFirst()
            return Waiter(ticket: entry.ticket, continuation: entry.continuation)
        }

        /// Takes every waiter out, oldest first, as `takeFirst()` does.
        mutating func takeAll() -> [Waiter] {
            defer { entries = [] }
            return entries.map { Waiter(ticket: $0.ticket, continuation: $0.continuation) }
        }
    }

    /// A waiter taken out of the queue: it must be let go exactly once.
    struct Waiter: Sendable {
        /// What it asked for.
        let ticket: Ticket
        fileprivate let continuation: CheckedContinuation<Value, Never>

        /// Ends the wait with `value`.
        func letGo(with value: Value) {
            continuation.resume(returning: value)
        }
    }

    /// What a cancelled wait leaves with, and what its leaving the queue changes.
    package struct Cancellation: Sendable {
        /// The value a wait cancelled before it is let out ends with.
        package let value: Value
        /// Called under the lock when a cancelled waiter has left the queue (not when it was
        /// cancelled before it arrived): those behind it may go now, say.
        package let left: @Sendable (inout State, inout Waiters) -> Void

        /// Ends a cancelled wait with `value`, and runs `left` when the waiter had queued.
        package init(_ value: Value, left: @escaping @Sendable (inout State, inout Waiters) -> Void = { _, _ in }) {
            self.value = value
            self.left = left
        }
    }

    private let locked: Locked<(state: State, waiters: Waiters)>

    /// A room with `state` and nobody waiting.
    package init(_ state: State) {
        locked = Locked((state, Waiters()))
    }

    /// Changes the state and lets waiters out, under the lock; those let out resume once it is
    /// released.
    @discardableResult
    package func withLock<Result>(_ body: (inout State, inout Waiters) throws -> Result) rethrows -> Result {
        let (result, leaving) = try locked.withLock { room in
            let result = try body(&room.state, &room.waiters)
            defer { room.waiters.leaving = [] }
            return (result, room.waiters.leaving)
        }
        for (continuation, value) in leaving { continuation.resume(returning: value) }
        return result
    }

    /// Joins the end of the queue with `ticket` and waits to be let out. `arriving` runs under
    /// the lock just after the waiter joined (it is the last one), and may let it out at once.
    ///
    /// With `cancellation`, a task cancelled before it arrives does not queue, and one cancelled
    /// while it waits leaves the queue; both end with `cancellation.value`. Without, the wait
    /// ends only when a waiter is let out.
    package func wait(_ ticket: Ticket, cancellation: Cancellation? = nil, arriving: (inout State, inout Waiters) -> Void) async -> Value {
        let id = locked.withLock { room in
            room.waiters.lastID += 1
            return room.waiters.lastID
        }
        guard let cancellation else { return await queue(ticket, id: id, cancellation: nil, arriving: arriving) }
        return await withTaskCancellationHandler {
            await queue(ticket, id: id, cancellation: cancellation, arriving: arriving)
        } onCancel: {
            withLock { state, waiters in
                // Not found: it has not arrived (it will see the cancellation), or it has left.
                guard let position = waiters.entries.firstIndex(where: { $0.id == id }) else { return }
                waiters.letOut(at: position, with: cancellation.value)
                cancellation.left(&state, &waiters)
            }
        }
    }

    private func queue(
        _ ticket: Ticket, id: UInt64, cancellation: Cancellation?,
        arriving: (inout State, inout Waiters) -> Void
    ) async -> Value {
        await withCheckedContinuation { continuation in
            withLock { state, waiters in
                // The task's cancelled flag is set before its cancellation handler runs, and the
                // handler takes this lock: either it is seen here, or the handler finds the waiter.
                if let cancellation, Task.isCancelled {
                    waiters.leaving.append((continuation, cancellation.value))
                    return
                }
                waiters.entries.append(Waiters.Entry(id: id, ticket: ticket, continuation: continuation))
                arriving(&state, &waiters)
            }
        }
    }
}

/// Runs `work`, which blocks its thread, on `queue` and waits for its result without blocking
/// the calling task's thread: Swift's cooperative pool has a thread per core, and a thread
/// blocked there (in libvips, on the disk) holds back every other task.
package func runBlocking<Result: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        queue.async { continuation.resume(returning: work()) }
    }
}
