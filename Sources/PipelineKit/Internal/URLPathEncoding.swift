import Foundation

/// Percent-encoding (RFC 3986) for URLs made from file paths, as a browser needs them: a space
/// ends a `srcset` candidate, `?` and `#` end the path, `%` starts an escape, and non-ASCII must
/// travel as UTF-8 bytes. The file names on disk are never changed; only the URLs naming them.
enum URLPathEncoding {
    /// RFC 3986 unreserved characters: the only ones a path segment keeps as they are, so nothing
    /// in a file name (`#`, `?`, `%`, `:`, `,`, spaces) can change what the URL means.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// What RFC 3986 allows anywhere in a URI, `%` included: an author's URL prefix keeps its
    /// scheme, host, port, separators and the escapes already written in it.
    private static let uriCharacters = unreserved.union(CharacterSet(charactersIn: ":/?#[]@!$&'()*+,;=%"))

    /// A path with `/` separators, each segment percent-encoded; the `/` stay separators.
    static func path(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { String($0).addingPercentEncoding(withAllowedCharacters: unreserved) ?? String($0) }
            .joined(separator: "/")
    }

    /// An author's URL prefix (`/img/`, `https://cdn.example.com/a b/`) with what no URI may
    /// hold (spaces, quotes, non-ASCII) encoded, and what it may hold left as written.
    static func prefix(_ prefix: String) -> String {
        prefix.addingPercentEncoding(withAllowedCharacters: uriCharacters) ?? prefix
    }
}
