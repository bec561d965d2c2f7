import Foundation

/// Placeholder until the HTML report lands: writes report.json only.
public enum ReportWriter {
    public static func write(_ report: RunReport, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(report).write(to: directory.appendingPathComponent("report.json"), options: .atomic)
    }
}
