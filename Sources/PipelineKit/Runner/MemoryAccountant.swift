import Vips

/// The run's memory as one account: the budget (`MemoryBudget`, or none) and every allowance
/// within it, each derived from the budget here and nowhere else. One per run, or one for the
/// runs a `SharedMemoryBudget` is given to; `explain` makes one to show the run's (`table`).
///
/// The run's admission weighs each input's estimate (`DecodeMemoryEstimate`) against the budget.
/// The allowances beside it bound what those estimates leave out or cannot see coming: PNGs read
/// whole, and decodes that cannot stream; and they size what estimates count per image (the
/// read-ahead readers) and when a decode is split into windows.
///
/// The allowance for PNGs read whole is the account's own: runs in one process with accounts of
/// their own (`watch`'s, one after another) do not share it, as each has its own budget to keep
/// within.
final class MemoryAccountant: Sendable {
    /// The run's memory budget; nil when no limit is known.
    let budget: MemoryBudget?
    /// Admission by memory: an input starts decoding only while the estimates of those being made
    /// fit in the budget. Nil when there is no budget: the in-flight window alone bounds them.
    let admission: MemoryAdmission?
    /// What PNGs read whole (`WholePNGReader`) may hold together. Estimates leave these reads
    /// out: a PNG that finds no room here streams instead, so the fast path never makes a run
    /// wait or grow with its width.
    let wholePNGReads: MemoryAdmission
    /// What the readers of one large TIFF's strips, or one large PNG's rows, decoded ahead may
    /// hold (`TIFFStripsAheadReader`, `PNGRowsAheadReader`); counted in the input's estimate.
    let readAhead: Int
    /// Decodes of local files that cannot stream (a progressive JPEG keeps every coefficient, an
    /// interlaced PNG the whole image) hold their full-size buffers while they decode: this keeps
    /// those that decode at once under `unstreamedDecodeTarget` together while other inputs can
    /// use the lanes (`MemoryAdmission.Policy.soft`), so that two of the largest do not meet
    /// just because they sort together. A PNG read whole (`wholePNGReads`) holds its full-size
    /// rows too, and takes room here beside them when there is room now, or streams
    /// (`MemoryAdmission.admitBesideNow`): otherwise the largest progressive decode and the
    /// largest PNG read meet by chance, and a run of more inputs has more chances for it, so its
    /// peak grows with the count.
    let unstreamedDecodes: MemoryAdmission
    /// The one-pass estimate from which outputs that keep a window decode it alone
    /// (`DecodePlan`).
    let windowedDecodeMinimum: Int64
    /// Whether runs that may start at any time draw on this account (`SharedMemoryBudget`): then
    /// no run knows that no other input will come, so none closes `unstreamedDecodes`' arrivals.
    let isShared: Bool

    init(budget: MemoryBudget?, shared: Bool = false) {
        self.budget = budget
        isShared = shared
        admission = budget.map { MemoryAdmission(capacity: $0.bytes) }
        wholePNGReads = MemoryAdmission(capacity: Self.wholePNGCapacity(under: budget))
        readAhead = Self.readAhead(under: budget)
        unstreamedDecodes = MemoryAdmission(capacity: Self.unstreamedDecodeTarget, policy: .soft(overflowAt: Self.asideLimit))
        windowedDecodeMinimum = Self.windowedDecodeMinimum(under: budget)
    }

    /// Called when a run has started every input it will: on the run's own account, those waiting
    /// for `unstreamedDecodes` need wait no longer for room that nothing else will ask for. On a
    /// shared one the next run's large decode may be about to ask, so they keep waiting.
    func runStartedEveryInput() {
        if !isShared { unstreamedDecodes.closeArrivals() }
    }

    // MARK: The policy's sizes

    /// What PNGs read whole hold together at most, budget or none: a PNG larger than this always
    /// streams. Sized so that the photographs of a common PNG corpus are read whole a few at a
    /// time (Benchmarks/RESULTS.md has the trade of memory for time it was chosen by).
    static let wholePNGReadsCeiling: Int64 = 128_000_000
    /// Under a budget, PNGs read whole get this fraction of it at most, as admission does not
    /// count them.
    static let wholePNGReadsShare: Int64 = 8
    /// What one image's read-ahead readers hold at most, budget or none: enough groups of rows
    /// that the workers keep ahead of the resize.
    static let readAheadCeiling = Int64(StripTIFF.defaultReadAhead)
    /// Under a budget, one image's read-ahead gets this fraction of it at most, so that the
    /// inputs being made together keep their readers.
    static let readAheadShare: Int64 = 16
    /// What decodes that cannot stream hold together before the next one waits aside: a large
    /// progressive photograph decodes beside inputs that stream, not beside another such photo.
    static let unstreamedDecodeTarget: Int64 = 64_000_000
    /// How many inputs may wait aside for `unstreamedDecodes` while others start: enough to look
    /// past eight copies of one large photo to something that streams.
    static let asideLimit = 16
    /// The smallest local file whose header is read for `unstreamedDecodes`: smaller ones hold
    /// little while decoded, and a run of many tiny images should not read each header twice. A
    /// progressive photograph compresses far: a file well under a megabyte may hold nearly the
    /// whole target while it decodes.
    static let unstreamedCheckFrom: Int64 = 64 << 10

    /// Whether a local file of `fileBytes` has its header read for `unstreamedDecodes`.
    static func checksUnstreamed(fileBytes: Int64?) -> Bool { (fileBytes ?? 0) >= unstreamedCheckFrom }

    /// Whether a decode that holds `unstreamed` bytes at full size runs alone on the decompress
    /// lanes (`StageQueue.run(exclusive:)`): one larger than the whole target (a large
    /// progressive photograph, which holds every coefficient while it decodes) is the run's peak
    /// by itself, and any decode beside it adds to that peak. The other stages go on meanwhile.
    static func decodesAlone(unstreamed: Int64) -> Bool { unstreamed > unstreamedDecodeTarget }

    /// The one-pass estimate from which outputs that keep a window decode it alone, budget or
    /// none: a pass over the file per window costs time, so only images whose decode-once rows
    /// would be very wide take it (a panorama for a cover crop), never a photograph.
    static let windowedDecodeFrom: Int64 = 150_000_000
    /// Under a budget, windows are decoded from this fraction of it when that is less than
    /// `windowedDecodeFrom`: a window plan that fits is better than a one-pass plan admission refuses.
    static let windowedDecodeShare: Int64 = 2

    // MARK: Derived from the budget

    /// What PNGs read whole may hold together under `budget` (or none).
    static func wholePNGCapacity(under budget: MemoryBudget?) -> Int64 {
        share(of: budget, wholePNGReadsShare, atMost: wholePNGReadsCeiling)
    }

    /// What one image's read-ahead readers may hold under `budget` (or none).
    static func readAhead(under budget: MemoryBudget?) -> Int {
        Int(share(of: budget, readAheadShare, atMost: readAheadCeiling))
    }

    /// The one-pass estimate from which windows are decoded alone under `budget` (or none).
    static func windowedDecodeMinimum(under budget: MemoryBudget?) -> Int64 {
        share(of: budget, windowedDecodeShare, atMost: windowedDecodeFrom)
    }

    /// `ceiling`, or under a budget one `fraction`th of it when that is less: the one rule every
    /// allowance follows.
    private static func share(of budget: MemoryBudget?, _ fraction: Int64, atMost ceiling: Int64) -> Int64 {
        budget.map { min(ceiling, $0.bytes / fraction) } ?? ceiling
    }
}
