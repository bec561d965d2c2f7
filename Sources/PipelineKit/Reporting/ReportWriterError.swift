/// A report that could not be written: the file or folder, and why.
public struct ReportWriterError: Error, Sendable, CustomStringConvertible {
    /// The file or folder that could not be written.
    public let path: String
    /// The system's reason.
    public let reason: String

    /// The message, naming the file and the reason.
    public var description: String { "cannot write the report \(path): \(reason)" }
}
