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
#endif
