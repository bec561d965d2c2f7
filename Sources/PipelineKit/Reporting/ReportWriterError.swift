/// A report that could not be written: the file or folder, and why.
package struct ReportWriterError: Error, Sendable, CustomStringConvertible {
    /// The file or folder that could not be written; empty when the reason names where.
    package let path: String
    /// The system's reason.
    package let reason: String

    /// The message, naming the file and the reason.
    package var description: String { path.isEmpty ? "cannot write the report: \(reason)" : "cannot write the report \(path): \(reason)" }
}
