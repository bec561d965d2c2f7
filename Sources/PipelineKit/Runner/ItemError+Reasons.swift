import Vips

extension ItemError {
    /// The reason for people that an underlying error gives: libvips' message (its own words,
    /// except for a format no permitted loader knows), or the error's description.
    static func reason(for error: any Error) -> String {
        guard let vipsError = error as? VipsError else { return String(describing: error) }
        // libvips reports a descriptor it could not get as a bad one, a write error or an unknown format.
        if OpenFileLimit.isReached || OpenFileLimit.isReported(in: vipsError.message) { return OpenFileLimit.reason }
        if isUnknownFormat(vipsError) { return unknownFormat }
        return vipsError.message.isEmpty ? "\(vipsError.operation) failed" : vipsError.message
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
