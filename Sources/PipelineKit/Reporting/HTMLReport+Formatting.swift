import Foundation

extension HTMLReport {
    /// How `index.html` links to a file: an absolute `file://` URL, percent-encoded, so the link
    /// holds wherever the report folder is moved or copied to (a CI artefact, say). A path that
    /// is not absolute resolves against the current directory.
    static func fileURL(forPath path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let components = URL(fileURLWithPath: absolute).standardizedFileURL.pathComponents.dropFirst()
        return "file:///" + URLPathEncoding.path(components.joined(separator: "/"))
    }

    /// `0.042` → `42 ms`, `3.5` → `3.50 s`, `125` → `2 min 5 s`.
    static func duration(_ seconds: Double) -> String {
        DurationFormat.string(seconds: seconds)
    }

    /// Sizes in powers of 1000, as the pipeline file's units (`50MB`) are, to three significant
    /// digits: `686 B`, `7.6 KB`, `168 KB`, `1.25 MB`.
    static func bytes(_ count: Int64) -> String {
        guard count >= 1000 else { return "\(count) B" }
        var value = Double(count) / 1000
        var unit = 0
        let units = ["KB", "MB", "GB", "TB"]
        while value >= 999.5, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let digits = value < 9.995 ? 2 : value < 99.95 ? 1 : 0
        return String(format: "%.\(digits)f", value) + " " + units[unit]
    }

    /// An output's size against its input's: `94% smaller`, or `12% larger`.
    static func saving(output: Int64, input: Int64) -> String {
        let change = (Double(output) - Double(input)) / Double(input) * 100
        let size = abs(change)
        // Rounded down past 99%: a tiny placeholder of a large photo is not "100% smaller".
        let percent = size >= 99 && change < 0 ? String(format: "%.1f", (size * 10).rounded(.down) / 10) : "\(Int(size.rounded()))"
        if percent == "0" { return "<span class=\"same\">same size as input</span>" }
        return change < 0
            ? "<span class=\"smaller\">\(percent)% smaller</span>"
            : "<span class=\"larger\">\(percent)% larger</span>"
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }

    /// A coordinate for SVG: finite, never negative, two decimals at most.
    static func svgNumber(_ value: Double) -> String {
        guard value.isFinite, value > 0 else { return "0" }
        return String(format: "%.2f", value)
    }
}
