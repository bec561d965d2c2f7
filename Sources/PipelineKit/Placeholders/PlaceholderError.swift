import Vips

/// A placeholder that could not be computed: which one, and why.
public struct PlaceholderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the placeholder could not be computed.
    public enum Reason: Sendable, Equatable {
        /// A setting is outside the values it may take.
        case settingOutOfRange(name: String, value: Int, allowed: ClosedRange<Int>)
        /// Pixels handed to an encoder do not fit its size or layout.
        case invalidPixels(String)
        /// The image cannot be turned into sRGB with at most one alpha band.
        case unsupportedImage(String)
        /// A libvips operation failed: its name and libvips' message.
        case vips(operation: String, message: String)
    }

    /// The placeholder that failed.
    public let kind: PlaceholderKind
    /// Why it failed.
    public let reason: Reason

    /// A failure of the placeholder `kind`, for `reason`.
    public init(_ kind: PlaceholderKind, _ reason: Reason) {
        self.kind = kind
        self.reason = reason
    }

    init(_ kind: PlaceholderKind, _ error: VipsError) {
        self.init(kind, .vips(operation: error.operation, message: error.description))
    }

    /// Runs a libvips step of the placeholder `kind`, naming the kind in its error.
    static func naming<Value>(_ kind: PlaceholderKind, _ body: () throws(VipsError) -> Value) throws(PlaceholderError) -> Value {
        do throws(VipsError) {
            return try body()
        } catch {
            throw PlaceholderError(kind, error)
        }
    }

    /// The message, naming the placeholder and the reason.
    public var description: String {
        let detail =
            switch reason {
            case .settingOutOfRange(let name, let value, let allowed):
                "\(name) is \(value), but must be from \(allowed.lowerBound) to \(allowed.upperBound)"
            case .invalidPixels(let message), .unsupportedImage(let message):
                message
            case .vips(let operation, let message):
                "libvips' \(operation) failed: \(message)"
            }
        return "cannot compute the \(kind.rawValue) placeholder: \(detail)"
    }
}
