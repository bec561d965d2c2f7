import Vips

/// Admission by memory: an input starts decoding only while the estimates of the inputs being
/// worked on, its own included, fit in the run's budget; otherwise it waits, first come first
/// served, until enough of them have finished. The in-flight window bounds how many inputs are
/// under way; this bounds what they may hold at once when a limit is known.
///
/// An estimate larger than the whole budget can never be admitted: the caller fails that input
/// rather than asking (see `fits(_:)`).
///
/// A soft admission (`Policy.soft`) keeps to its capacity only while that costs no parallel
/// work: an estimate larger than the capacity is admitted alone; one that fits now goes in even
/// past those waiting (they wait for room, not for their turn); and when `overflowAt` are
/// waiting, or `closeArrivals()` says no others will come, the oldest goes in over the capacity.
final class MemoryAdmission: Sendable {
    /// Bytes the admitted inputs may hold together.
    let capacity: Int64

    enum Policy: Sendable, Equatable {
        /// A limit: first come first served, never past the capacity.
        case hard
        /// A target: see the type's summary.
        case soft(overflowAt: Int)
    }

    let policy: Policy

    private struct Waiter {
        let id: UInt64
        let bytes: Int64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var admitted: Int64 = 0
        var peak: Int64 = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Waits cancelled before their continuation was queued.
        var cancelledBeforeQueued: Set<UInt64> = []
        /// Soft policy: no further arrivals, so nobody waits for room any more.
        var arrivalsClosed = false

        mutating func admit(_ bytes: Int64) {
            admitted += bytes
            peak = max(peak, admitted)
        }
    }

    private let state = Locked(State())

    init(capacity: Int64, policy: Policy = .hard) {
        self.capacity = max(0, capacity)
        self.policy = policy
    }

    /// Whether `bytes` may go in now beside what is admitted, by the policy.
    private func hasRoom(for bytes: Int64, in state: State) -> Bool {
        switch policy {
        case .hard: state.admitted + bytes <= capacity
        case .soft: state.admitted == 0 || state.admitted + bytes <= capacity || state.arrivalsClosed
        }
    }

    /// Whether a newcomer with `bytes` goes in without queueing: hard, nobody waiting ahead and
    /// room now (so a large input is not passed over for ever by a stream of small ones); soft,
    /// room now.
    private func entersAtOnce(_ bytes: Int64, _ state: State) -> Bool {
        (policy != .hard || state.waiters.isEmpty) && hasRoom(for: bytes, in: state)
    }

    /// Admits `bytes` at once if the policy lets them in now without waiting; true when it did
    /// (then one `release(bytes)` is due).
    func admitNow(_ bytes: Int64) -> Bool {
        state.withLock { state in
            guard entersAtOnce(bytes, state) else { return false }
            state.admit(bytes)
            return true
        }
    }

    /// Soft policy: no further inputs will ask, so those waiting go in now.
    func closeArrivals() {
        guard policy != .hard else { return }
        let admitted: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            state.arrivalsClosed = true
            return admitWaiters(&state)
        }
        for continuation in admitted { continuation.resume(returning: true) }
    }

    /// Takes the waiters that may go in now out of the queue, admitted: under the hard policy
    /// from the head while they fit; under the soft one any that has room, in order, and the
    /// oldest over the capacity when too many wait.
    private func admitWaiters(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        var admitted: [CheckedContinuation<Bool, Never>] = []
        switch policy {
        case .hard:
            while let first = state.waiters.first, hasRoom(for: first.bytes, in: state) {
                state.waiters.removeFirst()
                state.admit(first.bytes)
                admitted.append(first.continuation)
            }
        case .soft(let overflowAt):
            var index = 0
            while index < state.waiters.count {
                let waiter = state.waiters[index]
                if hasRoom(for: waiter.bytes, in: state) {
                    state.waiters.remove(at: index)
                    state.admit(waiter.bytes)
                    admitted.append(waiter.continuation)
                } else {
                    index += 1
                }
            }
            while state.waiters.count >= max(1, overflowAt) {
                let oldest = state.waiters.removeFirst()
                state.admit(oldest.bytes)
                admitted.append(oldest.continuation)
            }
        }
        return admitted
    }

    /// Whether an input with this estimate could ever be admitted.
    func fits(_ bytes: Int64) -> Bool { bytes <= capacity }

    /// How many are waiting now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// The most bytes admitted at once so far.
    var peakAdmitted: Int64 { state.withLock { $0.peak } }

    /// Waits until `bytes` fit beside what is admitted, then admits them; false when the task
    /// was cancelled first (nothing is admitted then). Each `true` needs one `release(bytes)`.
    func admit(_ bytes: Int64) async -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let (immediate, admitted): (Bool?, [CheckedContinuation<Bool, Never>]) = state.withLock { state in
                    if state.cancelledBeforeQueued.remove(id) != nil { return (false, []) }
                    if entersAtOnce(bytes, state) {
                        state.admit(bytes)
                        return (true, [])
                    }
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    // Soft: one more waiting may make too many.
                    return (nil, policy == .hard ? [] : admitWaiters(&state))
                }
                if let immediate { continuation.resume(returning: immediate) }
                for other in admitted { other.resume(returning: true) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelledBeforeQueued.insert(id)
                    return nil
                }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
            // The queue's head may have changed: those behind it may fit now.
            release(0)
        }
    }

    /// Gives back what `admit(bytes)` took and lets in the waiters that now fit, in order.
    func release(_ bytes: Int64) {
        let admitted: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            state.admitted -= bytes
            return admitWaiters(&state)
        }
        for continuation in admitted { continuation.resume(returning: true) }
    }
}
