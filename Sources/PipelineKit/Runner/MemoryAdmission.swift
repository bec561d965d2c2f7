import Vips

/// Admission by memory: an input starts decoding only while the estimates of the inputs being
/// worked on, its own included, fit in the run's budget; otherwise it waits, first come first
/// served, until enough of them have finished. The in-flight window bounds how many inputs are
/// under way; this bounds what they may hold at once when a limit is known.
///
/// An estimate larger than the whole budget can never be admitted: the caller fails that input
/// rather than asking (see `fits(_:)`).
final class MemoryAdmission: Sendable {
    /// Bytes the admitted inputs may hold together.
    let capacity: Int64

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

        mutating func admit(_ bytes: Int64) {
            admitted += bytes
            peak = max(peak, admitted)
        }
    }

    private let state = Locked(State())

    init(capacity: Int64) {
        self.capacity = max(0, capacity)
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
                let immediate: Bool? = state.withLock { state in
                    if state.cancelledBeforeQueued.remove(id) != nil { return false }
                    // Nobody waiting ahead and room now: in at once. Otherwise queue, so a large
                    // input is not passed over for ever by a stream of small ones.
                    if state.waiters.isEmpty, state.admitted + bytes <= capacity {
                        state.admit(bytes)
                        return true
                    }
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
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
            var admitted: [CheckedContinuation<Bool, Never>] = []
            while let first = state.waiters.first, state.admitted + first.bytes <= capacity {
                state.waiters.removeFirst()
                state.admit(first.bytes)
                admitted.append(first.continuation)
            }
            return admitted
        }
        for continuation in admitted { continuation.resume(returning: true) }
    }
}
