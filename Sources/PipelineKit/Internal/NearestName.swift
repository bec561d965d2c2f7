/// Finds the known name a misspelt one most likely meant (`"qualty"` → `"quality"`); public so
/// that plugins checking their own keys suggest names the way the pipeline file does.
public enum NearestName {
    /// The candidate `name` most likely meant, or nil when none is close.
    public static func suggestion(for name: String, among candidates: [String]) -> String? {
        let lowered = name.lowercased()
        if let sameLetters = candidates.first(where: { $0.lowercased() == lowered }) { return sameLetters }
        // Allow about one edit per three letters, at least one and at most three.
        let allowed = min(3, max(1, name.count / 3))
        // The distance is at least the difference in length: a name far longer than every
        // candidate (a value of megabytes) is not compared letter by letter.
        let scored = candidates.filter { abs($0.count - name.count) <= allowed }.map { ($0, distance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= allowed ? best.0 : nil
    }

    /// Levenshtein distance, with a transposition counting as one edit.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
