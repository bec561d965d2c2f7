import Foundation

/// Parsers for the unit-bearing strings of the pipeline file (durations, byte sizes, colours), and
/// the way back for durations.
package enum Units {
    /// Seconds in a duration: a string with `ms`, `s`, `m` or `h`, or a plain number of seconds,
    /// as a timeout is written in most configuration files. Nil when the node is neither.
    package static func seconds(in node: JSONNode) -> Double? {
        switch node.value {
        case .string(let text): seconds(in: text)
        case .number(let number, _): number >= 0 && number <= longestDuration ? number : nil
        default: nil
        }
    }

    /// Longer than a year is no time limit anyone means; refusing it also keeps infinities and
    /// overflowing milliseconds out of libcurl's and the decoder's timers.
    static let longestDuration: Double = 365 * 24 * 3600

    /// Seconds in a duration (a number with `ms`, `s`, `m` or `h`), or nil when the text is not one.
    package static func seconds(in text: String) -> Double? {
        unboundedSeconds(in: text).flatMap { $0.isFinite && $0 <= longestDuration ? $0 : nil }
    }

    /// Seconds in a duration written as one, however long: a number, spaces or none, and the unit.
    static func unboundedSeconds(in text: String) -> Double? {
        let units: [(suffix: String, factor: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            let number = beforeSpaces(text.dropLast(suffix.count))
            // "ms" also ends in "s": only accept a plain non-negative decimal before the unit.
            guard isPlainDecimal(number), let value = Double(number) else { continue }
            return value * factor
        }
        return nil
    }

    /// `text` without the spaces that end it: those between a number and its unit, which the
    /// JSON Schema (`pipeline schema`) allows, and no others.
    private static func beforeSpaces(_ text: Substring) -> String {
        String(text.reversed().drop { $0 == " " }.reversed())
    }

    /// A duration as the pipeline file writes one, to quote a setting back: whole milliseconds
    /// below a second, else seconds (the inverse of `seconds(in:)`).
    package static func text(seconds: Double) -> String {
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        // Whole minutes from two on read better as minutes ("5m"); a minute stays "60s".
        if seconds >= 120, seconds.truncatingRemainder(dividingBy: 60) == 0, seconds < 1e15 { return "\(Int(seconds) / 60)m" }
        if seconds == seconds.rounded(), seconds < 1e15 { return "\(Int(seconds))s" }
        return "\(seconds)s"
    }

    /// A byte count as the pipeline file writes one, in the largest of TB, GB, MB and KB that
    /// holds it whole, else plain bytes (the inverse of `bytes(in:)`).
    package static func text(bytes: Int64) -> String {
        let units: [(suffix: String, factor: Int64)] = [("TB", 1_000_000_000_000), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000)]
        for (suffix, factor) in units where bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor)\(suffix)"
        }
        return "\(bytes)"
    }

    /// Bytes in a size (an integer, or a number with a unit from `B` to `TiB`, as written here
    /// or all in lower case, and SI's `kB`), or nil when the text is not one. KB, MB, GB and TB are
    /// powers of 1000; KiB, MiB, GiB and TiB powers of 1024. `Mb` and the like are refused: they
    /// read as bits.
    package static func bytes(in text: String) -> Int64? {
        let units: [(suffix: String, factor: Double)] = [
            ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024), ("TiB", 1024 * 1024 * 1024 * 1024),
            ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("B", 1), ("", 1),
        ]
        for (suffix, factor) in units {
            let written = text.suffix(suffix.count)
            guard written == suffix || written == suffix.lowercased() || (suffix == "KB" && written == "kB") else { continue }
            let number = beforeSpaces(text.dropLast(suffix.count))
            guard isPlainDecimal(number), let value = Double(number) else { continue }
            let bytes = value * factor
            guard bytes < 9e18 else { return nil }
            return Int64(bytes.rounded())
        }
        return nil
    }

    /// `#rrggbb` for RGB components 0–255, or RGBA ones whose alpha is 255; `#rrggbbaa` for
    /// any other alpha: the form `colour(in:)` reads.
    static func text(colour components: [Double]) -> String {
        let shown = components.count == 4 && components[3] == 255 ? Array(components.prefix(3)) : components
        return "#"
            + shown.map { value in
                let digits = String(Int(value.rounded()), radix: 16)
                return digits.count < 2 ? "0" + digits : digits
            }.joined()
    }

    /// RGBA components 0–255 for `"#rgb"`, `"#rgba"`, `"#rrggbb"`, `"#rrggbbaa"`, `white`, `black`, `transparent`.
    package static func colour(in text: String) -> [Double]? {
        switch text.lowercased() {
        case "white": return [255, 255, 255, 255]
        case "black": return [0, 0, 0, 255]
        case "transparent": return [0, 0, 0, 0]
        default: break
        }
        guard text.hasPrefix("#") else { return nil }
        var digits = Array(text.dropFirst())
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        if digits.count == 3 || digits.count == 4 { digits = digits.flatMap { [$0, $0] } }
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var components: [Double] = stride(from: 0, to: digits.count, by: 2).map {
            Double(Int(String(digits[$0...$0 + 1]), radix: 16) ?? 0)
        }
        if components.count == 3 { components.append(255) }
        return components
    }

    /// RGBA components 0–255 for a colour given as a JSON array `[r, g, b]` or `[r, g, b, a]`,
    /// each 0–255 (alpha too, as in `#rrggbbaa`).
    package static func colour(components: [Double]) -> [Double]? {
        guard components.count == 3 || components.count == 4,
            components.allSatisfy({ (0...255).contains($0) })
        else { return nil }
        return components.count == 3 ? components + [255] : components
    }

    /// A colour in any of the forms a pipeline file accepts: a string (`colour(in:)`) or an
    /// array of 3 or 4 numbers 0–255.
    static func colour(in node: JSONNode) -> [Double]? {
        switch node.value {
        case .string(let text):
            return colour(in: text)
        case .array(let items):
            let numbers = items.compactMap { item -> Double? in
                if case .number(let number, _) = item.value { number } else { nil }
            }
            guard numbers.count == items.count else { return nil }
            return colour(components: numbers)
        default:
            return nil
        }
    }

    private static func isPlainDecimal(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } && text.filter { $0 == "." }.count <= 1
            && text.first != "." && text.last != "."
    }
}
