#if Server
import NIOHTTP1

/// The `Host` header's rules (RFC 9112, section 3.2): an HTTP/1.1 request has exactly one, whose
/// value is a host with an optional port, and a server answers any other 400. `ConnectionPersistence`
/// sees each request with its version and finds the fault; `RequestLineMiddleware` refuses it.
enum HostHeader {
    /// The field by which a fault is handed to the routes. One a client sent is removed first, so
    /// only the server's own check can set it.
    static let faultField = "x-pipeline-host-fault"

    /// What is wrong with `head`'s `Host` fields, or nil when nothing is.
    static func fault(of head: HTTPRequestHead) -> String? {
        let values = head.headers["host"]
        if values.count > 1 { return "more than one Host header" }
        guard let value = values.first else {
            return head.version.major == 1 && head.version.minor == 0 ? nil : "no Host header, which HTTP/1.1 requires"
        }
        return isHostAndPort(value) ? nil : "a Host header that is not a host and port"
    }

    /// Whether `value` is `uri-host [ ":" port ]`: a bracketed IP literal or a name of the
    /// characters a URI's host may hold, then digits. Empty is allowed, for a target without an
    /// authority.
    static func isHostAndPort(_ value: String) -> Bool {
        let isPort = { (text: Substring) in text.allSatisfy { $0.isASCII && $0.isNumber } }
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return false }
            let literal = value[value.index(after: value.startIndex)..<close]
            let rest = value[value.index(after: close)...]
            return !literal.isEmpty && literal.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }
                && (rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())))
        }
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let allowed = Set("-._~!$&'()*+,;=%")
        return parts[0].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || allowed.contains($0)) }
            && (parts.count == 1 || isPort(parts[1]))
    }
}
#endif
