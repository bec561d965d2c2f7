import Foundation

/// Hides what a URL may carry as a secret behind `…`, for every place a URL is shown or stored:
/// messages, events, reports, traces, manifests and cache entries. The request itself is made
/// with the URL as written.
///
/// Hidden are the user and password before the host (`http://…@host/`), the value of every
/// query parameter (`?w=…&access_token=…`, its name kept), the fragment (`#…`) and every
/// `;name=value` parameter of a path segment (`;jsessionid=…`). Secrets travel under too many
/// names (`access_token`, `apikey`, `X-Goog-Signature`, …) for a list of them to be safe, so
/// everything is hidden and the pipeline file names the parameters that may show
/// (`fetch.showQuery`).
public struct CredentialRedaction: Sendable, Equatable {
    /// What stands in for a hidden value.
    public static let hidden = "…"

    /// The query parameters whose values show, by their percent-decoded names, as written.
    private let shownNames: Set<String>

    /// Hides every query value but those of the parameters named in `showQuery` (the file's
    /// `fetch.showQuery`), compared with the parameter's percent-decoded name, case and all.
    public init(showQuery: [String] = []) {
        shownNames = Set(showQuery)
    }

    /// `url` with its userinfo, query values, fragment and path parameters hidden; anything
    /// that is not a URL with a scheme comes back as it is.
    public func redact(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        var result = String(url[..<schemeEnd.upperBound])
        var rest = url[schemeEnd.upperBound...]
        // The authority runs to the first "/", "?" or "#"; userinfo ends at its last "@".
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            result += Self.hidden + authority[at...]
        } else {
            result += authority
        }
        rest = rest[authorityEnd...]
        let fragmentStart = rest.firstIndex(of: "#")
        let beforeFragment = rest[..<(fragmentStart ?? rest.endIndex)]
        let queryStart = beforeFragment.firstIndex(of: "?")
        let path = beforeFragment[..<(queryStart ?? beforeFragment.endIndex)]
        result += path.split(separator: "/", omittingEmptySubsequences: false).map(Self.redactSegment).joined(separator: "/")
        if let queryStart {
            let query = beforeFragment[beforeFragment.index(after: queryStart)...]
            result += "?" + query.split(separator: "&", omittingEmptySubsequences: false).map(redactParameter).joined(separator: "&")
        }
        if let fragmentStart {
            result += rest.index(after: fragmentStart) == rest.endIndex ? "#" : "#" + Self.hidden
        }
        return result
    }

    /// One `name=value` query parameter, its value hidden unless its name is shown. A parameter
    /// without `=` is a value without a name: hidden too.
    private func redactParameter(_ parameter: Substring) -> String {
        guard !parameter.isEmpty else { return "" }
        guard let equals = parameter.firstIndex(of: "=") else {
            return shownNames.contains(Self.decoded(parameter)) ? String(parameter) : Self.hidden
        }
        let name = parameter[..<equals]
        let value = parameter[parameter.index(after: equals)...]
        guard !value.isEmpty, !shownNames.contains(Self.decoded(name)) else { return String(parameter) }
        return String(name) + "=" + Self.hidden
    }

    /// A path segment with the values of its `;name=value` parameters (a session id) hidden: everything
    /// after its first `;` is parameters (RFC 3986 §3.3), a literal `;` in a name is written `%3B`.
    private static func redactSegment(_ segment: Substring) -> String {
        guard let semicolon = segment.firstIndex(of: ";") else { return String(segment) }
        let parameters = segment[segment.index(after: semicolon)...].split(separator: ";", omittingEmptySubsequences: false)
        let hidden = parameters.map { parameter -> String in
            guard !parameter.isEmpty else { return "" }
            guard let equals = parameter.firstIndex(of: "=") else { return Self.hidden }
            return parameter.index(after: equals) == parameter.endIndex ? String(parameter) : String(parameter[...equals]) + Self.hidden
        }
        return String(segment[..<semicolon]) + ";" + hidden.joined(separator: ";")
    }

    /// `text` percent-decoded, or as it is when it does not decode.
    private static func decoded(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }

    /// `text` with every URL in it redacted (see `redact(_:)`): for messages that quote a URL
    /// among other words, such as the target of a refused redirect.
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

    /// The parts of a URL's path with each segment's `;` parameters left out, percent-decoded:
    /// what output paths are made of (`{name}`, `{dir}`), so that a session id in the path never
    /// becomes part of a file name. A segment whose escapes are not UTF-8 (a Latin-1 name,
    /// `caf%E9.jpg`) keeps them as written: it has no decoded name.
    package static func pathWithoutParameters(of url: URL?) -> String {
        guard let url else { return "" }
        return url.path(percentEncoded: true).split(separator: "/", omittingEmptySubsequences: false).map { segment in
            let plain = segment.firstIndex(of: ";").map { segment[..<$0] } ?? segment
            return plain.removingPercentEncoding ?? String(plain)
        }.joined(separator: "/")
    }
}
