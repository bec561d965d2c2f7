#if Server
import Foundation

extension StringProtocol {
    /// The text with its percent-encoded bytes decoded, as Foundation's `removingPercentEncoding`
    /// decodes them (nil when one is not a byte, or the bytes are not UTF-8); the text as it is
    /// when it has no `%`, without the round trip through Foundation that every request's path
    /// would otherwise take.
    var percentDecoded: String? {
        utf8.contains(UInt8(ascii: "%")) ? String(self).removingPercentEncoding : String(self)
    }

    /// The bytes the text spells, each escape (`%41`) as its byte, whether or not they are
    /// UTF-8 together; a `%` that begins no escape is itself.
    var percentDecodedBytes: [UInt8] {
        let bytes = Array(utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }
}

/// The value of one hexadecimal digit, or nil.
private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// The parameters of `query` (as sent, after the `?`) in order, each name and value
/// percent-decoded where it decodes, so that `%77idth=` asks for a width as `width=` does.
func decodedQueryParameters(_ query: String?) -> [(name: String, value: String)] {
    (query ?? "").split(separator: "&", omittingEmptySubsequences: true).map { parameter in
        let name = parameter.prefix { $0 != "=" }
        let value = parameter.dropFirst(name.count + 1)
        return (name.percentDecoded ?? String(name), value.percentDecoded ?? String(value))
    }
}
#endif
