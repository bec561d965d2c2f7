/// The qualities quality targets chose in a run, per format, kept as counts of each quality so
/// that a run of any number of outputs holds a hundred numbers a format: for the summary's
/// "qualities chosen" line.
package struct ChosenQualities: Sendable, Equatable {
    /// For each format, how many files got each quality (index 0 for quality 1).
    private var counts: [String: [Int]] = [:]

    /// No quality yet.
    package init() {}

    /// Counts a file of `format` encoded at the searched `quality` (1–100).
    package mutating func add(format: String, quality: Int) {
        let index = min(max(quality, 1), 100) - 1
        counts[format, default: [Int](repeating: 0, count: 100)][index] += 1
    }

    /// Whether no searched quality was counted.
    package var isEmpty: Bool { counts.isEmpty }

    /// Each format's lowest, median and highest quality, formats by name: `avif 38–61 (median
    /// 49, 12 files)`, or `webp 80 (3 files)` when every file got one quality.
    package var description: String {
        counts.keys.sorted().compactMap { format -> String? in
            guard let tally = counts[format] else { return nil }
            let total = tally.reduce(0, +)
            guard let low = tally.firstIndex(where: { $0 > 0 }), let high = tally.lastIndex(where: { $0 > 0 }) else { return nil }
            // The lower median: the quality of the file at position (total + 1) / 2.
            var seen = 0
            let median =
                tally.firstIndex { count in
                    seen += count
                    return seen >= (total + 1) / 2
                } ?? low
            let files = "\(total) file\(total == 1 ? "" : "s")"
            return low == high ? "\(format) \(low + 1) (\(files))" : "\(format) \(low + 1)–\(high + 1) (median \(median + 1), \(files))"
        }.joined(separator: ", ")
    }
}
