import Vips

/// Counts units of work that must grow no faster than a run's size (bytes hashed for
/// fingerprints, output paths compared with one another), so a test can check how work grows
/// with the number of outputs without timing anything.
///
/// Off unless a test sets one for its task (a task-local: the run's tasks inherit it, and tests
/// running at the same time do not see each other's counts).
final class WorkCounter: Sendable {
    enum Kind: Sendable, Hashable {
        /// Bytes fed to the hash that makes the journal's fingerprints.
        case fingerprintBytes
        /// Pairs of one input's output paths compared for clashes while planning.
        case plannedPathPairs
        /// Pairs of outputs compared for a shared path template while loading the file.
        case templatePairs
    }

    @TaskLocal static var current: WorkCounter?

    private let counts = Locked<[Kind: Int]>([:])

    init() {}

    /// Adds `amount` to the count of `kind` of the task's counter, if it has one.
    static func add(_ kind: Kind, _ amount: Int = 1) {
        guard let counter = current, amount != 0 else { return }
        counter.counts.withLock { $0[kind, default: 0] += amount }
    }

    func count(_ kind: Kind) -> Int {
        counts.withLock { $0[kind] ?? 0 }
    }
}
