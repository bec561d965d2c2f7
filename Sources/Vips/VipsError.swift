import CVips
import Foundation

/// A libvips operation failed; `message` is libvips' own explanation.
public struct VipsError: Error, Sendable, CustomStringConvertible {
    /// The operation that failed, for example `resize` or `load`.
    public let operation: String
    /// What libvips said, trimmed to its last meaningful lines.
    public let message: String

    /// A failure of `operation`, explained by `message` (empty when there is nothing to add).
    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    /// libvips' explanation, or that the operation failed when it gave none.
    public var description: String { message.isEmpty ? "\(operation) failed" : message }

    /// Copies and clears libvips' error buffer right after a failed call, so that the text
    /// belongs to this failure and does not leak into the next one.
    static func fromLibrary(operation: String) -> VipsError {
        guard let buffer = vips_error_buffer_copy() else {
            return VipsError(operation: operation, message: "")
        }
        defer { g_free(buffer) }
        let lines = String(cString: buffer)
            .split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        // libvips repeats the same cause through each nested operation; keep the distinct lines.
        var distinct: [String] = []
        for line in lines where !distinct.contains(line) { distinct.append(line) }
        return VipsError(operation: operation, message: distinct.joined(separator: "; "))
    }
}
