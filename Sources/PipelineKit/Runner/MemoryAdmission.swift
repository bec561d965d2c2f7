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
/// waiting, or `closeArrivals()` says no others will come, the oldest goes in over the capacity,
/// but never past `overflowCeiling`: however many wait, the large ones among them go in one
/// beside another, not all at once.
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

    /// Soft policy: what those admitted over the capacity may hold together at most (one alone
    /// may hold more). Without it, the waiting a long run piles up would go in at once, and the
    /// run's peak would grow with its number of inputs.
    var overflowCeiling: Int64 { capacity * 2 }

    private struct State: Sendable {
        var admitted: Int64 = 0
        /// Of `admitted`, what `admitBesideNow` let in.
        var admittedBeside: Int64 = 0
        var peak: Int64 = 0
        /// Soft policy: no further arrivals, so nobody waits for room any more.
        var arrivalsClosed = false

        mutating func admit(_ bytes: Int64) {
            admitted += bytes
            peak = max(peak, admitted)
        }
    }

    /// The bytes admitted, and the inputs waiting with their estimates; each leaves admitted
    /// (true) or cancelled (false).
    private let room = WaitingRoom<State, Int64, Bool>(State())

    init(capacity: Int64, policy: Policy = .hard) {
        self.capacity = max(0, capacity)
        self.policy = policy
    }

    /// Whether `bytes` may go in now beside what is admitted, by the policy.
    private func hasRoom(for bytes: Int64, in state: State) -> Bool {
        switch policy {
        case .hard: state.admitted + bytes <= capacity
        case .soft:
            state.admitted == 0 || state.admitted + bytes <= capacity
                || (state.arrivalsClosed && state.admitted + bytes <= overflowCeiling)
        }
    }

    /// Admits `bytes` at once if the policy lets them in now without waiting; true when it did
    /// (then one `release(bytes)` is due). Hard: nobody waiting ahead and room now (so a large
    /// input is not passed over for ever by a stream of small ones); soft: room now.
    func admitNow(_ bytes: Int64) -> Bool {
        room.withLock { state, waiters in
            guard policy != .hard || waiters.isEmpty, hasRoom(for: bytes, in: state) else { return false }
            state.admit(bytes)
            return true
        }
    }

    /// As `admitNow`, but weighed only against what `admit` and `admitNow` let in, not against
    /// others let in this way, which count for those: for reads that have an allowance of their
    /// own among themselves (PNGs read whole) and here must only not meet the others (decodes that
    /// cannot stream). True when it did; then one `releaseBeside(bytes)` is due.
    func admitBesideNow(_ bytes: Int64) -> Bool {
        room.withLock { state, waiters in
            var others = state
            others.admitted -= state.admittedBeside
            guard policy != .hard || waiters.isEmpty, hasRoom(for: bytes, in: others) else { return false }
            state.admit(bytes)
            state.admittedBeside += bytes
            return true
        }
    }

    /// Gives back what `admitBesideNow(bytes)` took and lets in the waiters that now fit.
    func releaseBeside(_ bytes: Int64) {
        room.withLock { state, waiters in
            state.admittedBeside -= bytes
            state.admitted -= bytes
            admitWaiters(&state, &waiters)
        }
    }

    /// Soft policy: no further inputs will ask, so those waiting go in now, as many as
    /// `overflowCeiling` has room for, and the rest as it does.
    func closeArrivals() {
        guard policy != .hard else { return }
        room.withLock { state, waiters in
            state.arrivalsClosed = true
            admitWaiters(&state, &waiters)
        }
    }

    /// Lets out, admitted, the waiters that may go in now: under the hard policy from the head
    /// while they fit; under the soft one any that has room, in order, and the oldest over the
    /// capacity, within `overflowCeiling`, when too many wait.
    private func admitWaiters(_ state: inout State, _ waiters: inout WaitingRoom<State, Int64, Bool>.Waiters) {
        switch policy {
        case .hard:
            while !waiters.isEmpty, hasRoom(for: waiters[0], in: state) {
                state.admit(waiters[0])
                waiters.letOutFirst(with: true)
            }
        case .soft(let overflowAt):
            var index = 0
            while index < waiters.count {
                if hasRoom(for: waiters[index], in: state) {
                    state.admit(waiters[index])
                    waiters.letOut(at: index, with: true)
                } else {
                    index += 1
                }
            }
            while waiters.count >= max(1, overflowAt), state.admitted + waiters[0] <= overflowCeiling {
                state.admit(waiters[0])
                waiters.letOutFirst(with: true)
            }
        }
    }

    /// Whether an input with this estimate could ever be admitted.
    func fits(_ bytes: Int64) -> Bool { bytes <= capacity }

    /// How many are waiting now.
    var waiting: Int { room.withLock { $1.count } }

    /// The most bytes admitted at once so far.
    var peakAdmitted: Int64 { room.withLock { state, _ in state.peak } }

    /// Waits until `bytes` fit beside what is admitted, then admits them; false when the task
    /// was cancelled first (nothing is admitted then). Each `true` needs one `release(bytes)`.
    func admit(_ bytes: Int64) async -> Bool {
        // A cancelled waiter leaving may change the queue's head: those behind it may fit now.
        let cancellation = WaitingRoom<State, Int64, Bool>.Cancellation(false) { [self] state, waiters in
            admitWaiters(&state, &waiters)
        }
        return await room.wait(bytes, cancellation: cancellation) { state, waiters in
            // Arrived last: hard, it goes in at once only with nobody ahead; soft, any that has
            // room goes in, and one more waiting may make too many.
            if policy == .hard {
                guard waiters.count == 1 else { return }
            }
            admitWaiters(&state, &waiters)
        }
    }

    /// Gives back what `admit(bytes)` took and lets in the waiters that now fit, in order.
    func release(_ bytes: Int64) {
        room.withLock { state, waiters in
            state.admitted -= bytes
            admitWaiters(&state, &waiters)
        }
    }
}
