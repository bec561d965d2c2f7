import Foundation

/// Hides the credentials a URL carries (the user and password before the host, and query
/// parameters such as a presigned URL's signature) behind `***`, for every place a URL is
/// shown or stored: messages, events, reports, traces, manifests and cache entries. The
/// request itself is made with the URL as written.
public struct CredentialRedaction: Sendable, Equatable {
    /// Query parameters that carry secrets in any run, compared without regard to case.
    public static let standardQueryNames = [
        "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
        "token", "sig", "signature", "key", "password",
    ]

    /// The names compared, lowercased: the standard ones and the pipeline file's `fetch.redactQuery`.
    private let queryNames: Set<String>

    /// Redacts the standard query parameters and `extraQueryNames` (the file's `fetch.redactQuery`).
    public init(extraQueryNames: [String] = []) {
        queryNames = Set((Self.standardQueryNames + extraQueryNames).map { $0.lowercased() })
    }

    /// `url` with its userinfo and the values of secret query parameters replaced by `***`;
    /// anything that is not a URL with a scheme comes back as it is.
    public func redact(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        var text = url
        // The authority runs from after "://" to the first "/", "?" or "#"; userinfo ends at its last "@".
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = text[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        if let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") {
            text.replaceSubrange(authorityStart..<at, with: "***")
        }
        guard let question = text.firstIndex(of: "?") else { return text }
        let fragmentStart = text[question...].firstIndex(of: "#") ?? text.endIndex
        let parameters = text[text.index(after: question)..<fragmentStart].split(separator: "&", omittingEmptySubsequences: false)
        let redacted = parameters.map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
            let name = String(parameter[..<equals])
            let decoded = (name.removingPercentEncoding ?? name).lowercased()
            return queryNames.contains(decoded) ? name + "=***" : String(parameter)
        }
        text.replaceSubrange(text.index(after: question)..<fragmentStart, with: redacted.joined(separator: "&"))
        return text
    }

    /// `text` with every http(s) or s3 URL in it redacted (see `redact(_:)`): for messages that
    /// quote a URL among other words, such as libcurl's errors.
    public func redactURLs(in text: String) -> String {
        guard text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "://") {
            // Back up over the scheme's letters.
            var schemeStart = start.lowerBound
            while schemeStart > rest.startIndex, rest[rest.index(before: schemeStart)].isLetter {
                schemeStart = rest.index(before: schemeStart)
            }
            let end =
                rest[start.upperBound...].firstIndex { $0.isWhitespace || $0 == "\"" || $0 == "'" || $0 == ">" || $0 == "<" }
                ?? rest.endIndex
            result += rest[..<schemeStart]
            result += redact(String(rest[schemeStart..<end]))
            rest = rest[end...]
        }
        return result + rest
    }
}
