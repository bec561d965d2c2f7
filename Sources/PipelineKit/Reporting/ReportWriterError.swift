/// A report that could not be written: the file or folder, and why.
package struct ReportWriterError: Error, Sendable, CustomStringConvertible {
    /// The file or folder that could not be written.
    package let path: String
    /// The system's reason.
    package let reason: String

    /// The message, naming the file and the reason.
    package var description: String { "cannot write the report \(path): \(reason)" }
}
