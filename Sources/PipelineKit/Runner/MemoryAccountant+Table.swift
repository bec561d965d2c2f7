/// One line of a run's memory account (`PlanExplanation.memoryAccount`): an allowance within the
/// run's memory, who may take from it, and why it is the size it is.
public struct MemoryAllowance: Sendable, Equatable {
    /// What the allowance is for, for example "PNGs read whole".
    public let name: String
    /// Its size in bytes; nil when nothing bounds it (no memory budget is set).
    public let bytes: Int64?
    /// Who may take from it, and how: together, or each on its own.
    public let takers: String
    /// Why it is this size: the rule that derives it from the budget, and what it guards.
    public let why: String
}

extension MemoryAccountant {
    /// Every allowance the account holds, the run's admission first, as `explain` prints them.
    var allowances: [MemoryAllowance] {
        let megabytes = MemoryBudget.megabytes
        let budgeted = budget != nil
        let underBudget = { (fraction: Int64, ceiling: Int64) in
            !budgeted
                ? "\(megabytes(ceiling)) with no budget (1/\(fraction) of one at most)"
                : "1/\(fraction) of the budget, \(megabytes(ceiling)) at most"
        }
        let admissionWhy =
            budget.map { "the whole budget (\($0)): an input starts decoding only while its estimate fits beside the others'" }
            ?? "no memory budget is set: the in-flight window alone bounds the inputs being made"
        return [
            MemoryAllowance(
                name: "run admission", bytes: budget?.bytes, takers: "every input being made, by its estimate",
                why: admissionWhy),
            MemoryAllowance(
                name: "PNGs read whole", bytes: wholePNGReads.capacity, takers: "PNGs read whole with libdeflate, together",
                why: underBudget(Self.wholePNGReadsShare, Self.wholePNGReadsCeiling)
                    + ": estimates leave these reads out, so a PNG that finds no room streams instead"),
            MemoryAllowance(
                name: "read-ahead", bytes: Int64(readAhead), takers: "each large TIFF's strips or PNG's rows decoded ahead",
                why: underBudget(Self.readAheadShare, Self.readAheadCeiling)
                    + ": counted in its input's estimate, and enough rows for the workers to stay ahead of the resize"),
            MemoryAllowance(
                name: "unstreamed decodes", bytes: unstreamedDecodes.capacity,
                takers: "local files from \(Self.unstreamedCheckFrom >> 10) KiB whose decode cannot stream, and PNGs read whole, together",
                why: "a target, not a limit: two of the largest progressive JPEGs or interlaced PNGs do not decode at once, "
                    + "nor one beside a PNG read whole, while inputs that stream can use the lanes (up to \(Self.asideLimit) wait aside); "
                    + "one larger than all of it decodes alone"),
            MemoryAllowance(
                name: "windowed decodes", bytes: windowedDecodeMinimum,
                takers: "cover outputs of an image whose one-pass estimate reaches it, each decoding its window alone",
                why: underBudget(Self.windowedDecodeShare, Self.windowedDecodeFrom)
                    + ": a plan of windows that fits is better than one pass admission refuses"),
        ]
    }

    /// The account as lines of text, one line each, in aligned columns under a heading.
    static func table(_ allowances: [MemoryAllowance]) -> [String] {
        let sizes = allowances.map { $0.bytes.map(MemoryBudget.megabytes) ?? "none" }
        let nameWidth = allowances.map(\.name.count).max() ?? 0
        let sizeWidth = sizes.map(\.count).max() ?? 0
        let takersWidth = allowances.map(\.takers.count).max() ?? 0
        let padded = { (text: String, width: Int) in text + String(repeating: " ", count: max(0, width - text.count)) }
        var lines = ["memory account (what the run's memory holds, who may take what, and why):"]
        for (allowance, size) in zip(allowances, sizes) {
            let sizeColumn = String(repeating: " ", count: max(0, sizeWidth - size.count)) + size
            let columns = [padded(allowance.name, nameWidth), sizeColumn, padded(allowance.takers, takersWidth), allowance.why]
            lines.append("  " + columns.joined(separator: "  "))
        }
        return lines
    }
}
