extension PathTemplate {
    /// The number of hex digits `{hash}` stands for.
    public static let defaultHashLength = 10
    /// The numbers of hex digits `{hash:N}` may ask for: fewer than 6 would make two files'
    /// names clash too easily, and a SHA-256 has 64.
    public static let hashLengths = 6...64

    /// The value a path's `{hash}` is filled with before the file is written: the planned path
    /// keeps the placeholder as written.
    static let unknownHash = "{hash}"

    /// Whether the template names its file by the hash of its bytes.
    public var namesHash: Bool { hashLength != nil }

    /// The number of hex digits of the bytes' SHA-256 its `{hash}` puts in the file's name, or
    /// nil when the template has no `{hash}`.
    public var hashLength: Int? {
        for piece in pieces { if case .hash(let length) = piece { return length } }
        return nil
    }

    /// The number of hex digits for `{name}` when it is `hash` or `hash:N`; nil for another name.
    static func hashLength(_ name: String) throws(Failure) -> Int? {
        if name == Placeholder.hash.rawValue { return defaultHashLength }
        guard name.hasPrefix("hash:") else { return nil }
        let digits = name.dropFirst("hash:".count)
        guard let length = Int(digits), digits.allSatisfy({ $0.isASCII && $0.isNumber }), hashLengths.contains(length) else {
            throw Failure(
                message: "{\(name)} asks for \(digits.isEmpty ? "no" : "\"\(digits)\"") hex digits: "
                    + "the number in {hash:N} must be from \(hashLengths.lowerBound) to \(hashLengths.upperBound)")
        }
        return length
    }

    /// Refuses a `{hash}` in a folder's name: the file is written under a temporary name beside
    /// its final one, and renamed once its hash is known, so the folder must be known before.
    static func checkHashInFileName(_ pieces: [Piece]) throws(Failure) {
        guard let first = pieces.firstIndex(where: { if case .hash = $0 { true } else { false } }) else { return }
        for piece in pieces[first...] {
            let folder: Bool
            switch piece {
            case .literal(let text): folder = text.contains("/")
            case .placeholder(let placeholder): folder = placeholder == .dir
            case .hash: folder = false
            }
            guard !folder else { throw Failure(message: "{hash} may only be in the file name, not in a folder's name") }
        }
    }

    /// What `{hash}` of `length` digits becomes for `value`: the start of a 64-digit hex digest,
    /// the pattern's unknown hex digit repeated, or the placeholder as written while unknown.
    static func filledHash(_ value: String, length: Int) throws(Failure) -> String {
        if value == unknownHash { return length == defaultHashLength ? "{hash}" : "{hash:\(length)}" }
        if value == String(PathPattern.hexDigit) { return String(repeating: PathPattern.hexDigit, count: length) }
        guard value.utf8.count == 64, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw Failure(message: "{hash} needs a SHA-256 in lowercase hex, not \(value.quotedValue)")
        }
        return String(value.prefix(length))
    }
}
