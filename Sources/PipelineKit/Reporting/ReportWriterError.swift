/// A report that could not be written: the file or folder, and why.
public struct ReportWriterError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String { "cannot write the report \(path): \(reason)" }
}
