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
