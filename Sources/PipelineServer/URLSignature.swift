#if Server
import Foundation
import PipelineKit

/// Signed URLs as imgproxy signs them: the path starts with a signature, the URL-safe base64
/// (without padding) of the HMAC-SHA256, under the key, of the salt followed by the rest of the
/// path as sent (from its leading `/`, still percent-encoded). The query is not signed, but for
/// `expires` (a Unix time in seconds), which follows the path in the signed string as
/// `?expires=N`, so that a URL may be signed to stop working at a time.
struct URLSignature: Sendable {
    private let key: [UInt8]
    private let salt: [UInt8]

    init(_ signing: ServeSettings.Signing) {
        key = signing.key
        salt = signing.salt
    }

    /// The rest of `path` (from the `/` after the signature) when its first part is the right
    /// signature for it and for `expires` (the query's `expires` as sent, when it has one),
    /// compared in constant time; nil otherwise.
    func verified(_ path: String, expires: Substring? = nil) -> String? {
        let raw = path.hasPrefix("/") ? path.dropFirst() : path[...]
        guard let slash = raw.firstIndex(of: "/"), let signature = Self.decode(raw[..<slash]) else { return nil }
        let rest = String(raw[slash...])
        let expected = SHA256.hmac(key: key, message: salt + Self.signed(rest, expires: expires))
        // Every byte compared whatever the first difference, so the time taken tells nothing.
        guard signature.count == expected.count else { return nil }
        let difference = zip(signature, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) }
        return difference == 0 ? rest : nil
    }

    /// The signature of `path` (from its leading `/`), and of `expires` when the URL has one,
    /// for a program that makes URLs.
    func signature(of path: String, expires: Int? = nil) -> String {
        Self.encode(Data(SHA256.hmac(key: key, message: salt + Self.signed(path, expires: expires.map { Substring(String($0)) }))))
    }

    /// The string signed: the path, then `?expires=N` when the URL has an `expires`.
    private static func signed(_ path: String, expires: Substring?) -> [UInt8] {
        Array(path.utf8) + (expires.map { Array("?expires=\($0)".utf8) } ?? [])
    }

    /// The values of `expires` in a query as sent (`a=1&expires=N`), not decoded; its name is
    /// read as the other parameters' are (`%65xpires`), and one without a value counts, empty.
    static func expiries(inQuery query: String) -> [Substring] {
        query.split(separator: "&").compactMap { parameter in
            let name = parameter.prefix { $0 != "=" }
            guard (name.percentDecoded ?? String(name)) == "expires" else { return nil }
            return parameter.dropFirst(name.count + 1)
        }
    }

    /// The most characters a signature is spelled with: 43 of base64, padding, and one more.
    static let longestSpelling = 46

    /// The most characters a signature in standard base64 spans when sent with its `/`: its 43,
    /// and padding. A part before or after it (`x/SIGNATURE`, `SIGNATURE/t`) is longer.
    static let longestSlashedSpelling = 44

    /// Whether `part` of a path may hold a signature, however it is spelled: a run of at least
    /// 40 characters of base64 (URL-safe or standard, so with padding, a character more or
    /// less, or joined to a name, as in `SIGNATURE.jpg`), percent escapes counting as what they
    /// spell. With `mixed`, the run must also look random, as 256 random bits almost always do:
    /// upper and lower case letters and digits, and few separators (`-`, `_`), so that a long
    /// name of words and numbers (`a-photo-of-the-beach-at-dawn-by-Ann-2024.jpg`) is not taken for one.
    static func mayHoldSignature(_ part: Substring, mixed: Bool) -> Bool {
        var run = 0
        var separators = 0
        var kinds: (upper: Bool, lower: Bool, digit: Bool) = (false, false, false)
        // Escapes as their bytes, even beside one that is no UTF-8 (`%FF`), which must not keep
        // the rest from being read.
        for byte in part.percentDecodedBytes {
            let upper = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            let lower = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            let digit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard upper || lower || digit || "-_+/".utf8.contains(byte) else {
                (run, separators, kinds) = (0, 0, (false, false, false))
                continue
            }
            run += 1
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") { separators += 1 }
            kinds = (kinds.upper || upper, kinds.lower || lower, kinds.digit || digit)
            // One separator in 32 characters, on average, in base64 of random bits.
            let looksRandom = kinds.upper && kinds.lower && kinds.digit && separators * 8 <= run
            if run >= 40, !mixed || looksRandom { return true }
        }
        return false
    }

    /// URL-safe base64 without padding.
    private static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of URL-safe base64 without padding, or nil when `text` is not that in its one
    /// canonical form: the unused low bits of the last digit must be zero, so that a signature
    /// has one spelling only.
    private static func decode(_ text: Substring) -> Data? {
        guard !text.isEmpty, text.count <= 128, !text.contains("="), !text.contains("+") else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        guard let data = Data(base64Encoded: standard), encode(data) == text else { return nil }
        return data
    }
}
#endif
