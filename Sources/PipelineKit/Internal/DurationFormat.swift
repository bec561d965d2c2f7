import Foundation

/// How a duration reads to a person, wherever the package shows one (the HTML report, the
/// progress line's ETA): `42 ms`, `3.50 s`, `2 min 5 s`, and `–` for none.
///
/// A duration quoted back from the pipeline file (`decompress.timeout (60s)`) is written in the
/// file's own syntax instead, by `Units.text(seconds:)`, the inverse of its parser.
package enum DurationFormat {
    package static func string(seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "–" }
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds < 60 { return String(format: "%.2f s", seconds) }
        let whole = Int(seconds.rounded())
        return "\(whole / 60) min \(whole % 60) s"
    }
}
