import Foundation
import Vips

extension ItemError {
    /// The reason for people that an underlying error gives: libvips' message (its own words,
    /// except for a format no permitted loader knows), or the error's description.
    static func reason(for error: any Error) -> String {
        guard let vipsError = error as? VipsError else { return description(of: error) }
        // libvips reports a descriptor it could not get as a bad one, a write error or an unknown format.
        if OpenFileLimit.isReached || OpenFileLimit.isReported(in: vipsError.message) { return OpenFileLimit.reason }
        if isUnknownFormat(vipsError) { return unknownFormat }
        let lines = withoutStraySeeks(vipsError.message.components(separatedBy: "; "))
        return vipsError.message.isEmpty ? "\(vipsError.operation) failed" : lines.joined(separator: "; ")
    }

    /// `lines` without libvips' "bad seek to N" (after the name of the file, descriptor or
    /// `source` it was reading), unless that is all they say. A loader that asks past the end
    /// writes it on its way to failing; beside the loader's own reason it only misleads. And
    /// another thread's, left in libvips' one error buffer, is copied out with a step's or an
    /// encoder's failure, naming a file that is not this input's. A line that says more before
    /// the name (a reason of ours that quotes libvips) is not one.
    private static func withoutStraySeeks(_ lines: [String]) -> [String] {
        let isSeek = { (line: String) -> Bool in
            guard let range = line.range(of: "bad seek to ", options: .backwards) else { return false }
            let before = line[..<range.lowerBound]
            let offset = line[range.upperBound...]
            let isName = before.isEmpty || (before.hasSuffix(": ") && !before.dropLast(2).contains(": "))
            return isName && !offset.isEmpty && offset.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return lines.contains(where: { !isSeek($0) }) ? lines.filter { !isSeek($0) } : lines
    }

    /// What an error a plugin threw says of itself: Foundation's in the system's words, else a
    /// `LocalizedError`'s `errorDescription`, else its `description` (a plugin's error may be
    /// either), else its type and case.
    static func description(of error: any Error) -> String {
        if error is CocoaError || error is POSIXError { return ErrorText.reason(error) }
        if let text = (error as? any LocalizedError)?.errorDescription { return text }
        return String(describing: error)
    }

    static let unknownFormat = "not an image libvips can read (unknown or unsupported format)"

    /// An input of no bytes, local or remote, said the same way wherever it comes from.
    static let emptyFile = "the file is empty"

    /// Whether libvips failed because no permitted loader knows the format.
    static func isUnknownFormat(_ error: any Error) -> Bool {
        guard let message = (error as? VipsError)?.message else { return false }
        return message.contains("is not a known file format") || message.contains("not in a known format")
            || message.contains("operation is blocked")
    }
}
