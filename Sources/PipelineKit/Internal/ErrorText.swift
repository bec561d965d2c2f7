import Foundation

/// What went wrong reading a file or decoding its JSON, in words a person can act on. Foundation's
/// own descriptions ("The data isn't in the correct format", "NSCocoaErrorDomain error 256")
/// name neither the system's reason nor the key at fault.
package enum ErrorText {
    /// The system's reason (`No such file or directory`, `Is a directory`) when `error` carries
    /// one; where decoding failed, and how, for a `DecodingError`; else Foundation's description.
    package static func reason(_ error: any Error) -> String {
        if let decoding = error as? DecodingError { return describe(decoding) }
        if let cocoa = error as? CocoaError, let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let file = error as? RegularFile.Failure { return file.reason }
        return (error as NSError).localizedDescription
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key \(key.stringValue.quotedValue)\(place(context))"
        case .typeMismatch(let type, let context):
            return "expected \(name(of: type))\(place(context))"
        case .valueNotFound(let type, let context):
            return "expected \(name(of: type)), found null\(place(context))"
        case .dataCorrupted(let context):
            // At the top, the bytes are not JSON at all; below it, a value is not one the key takes.
            return context.codingPath.isEmpty ? "not JSON" : "\(context.debugDescription)\(place(context))"
        @unknown default:
            return (error as NSError).localizedDescription
        }
    }

    /// ` at inputs[0].outputs`, the JSON path decoding had reached; empty at the top.
    private static func place(_ context: DecodingError.Context) -> String {
        guard !context.codingPath.isEmpty else { return "" }
        var path = ""
        for key in context.codingPath {
            if let index = key.intValue { path += "[\(index)]" } else { path += path.isEmpty ? key.stringValue : "." + key.stringValue }
        }
        return " at \(path)"
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        default: String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}
