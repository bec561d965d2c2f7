import Foundation

/// Following redirects one hop at a time, as libcurl would (its rules for the method, its
/// resolution of a relative `Location`), but deciding per hop whether the file's headers go.
extension CurlDataLoader {
    /// The statuses whose `Location` is followed, as libcurl follows them.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The request to make after `response` to `request`, or nil when it is no redirect.
    /// `target` is libcurl's resolution of the `Location` header (CURLINFO_REDIRECT_URL).
    /// A redirect to a scheme other than http and https is refused.
    static func redirect(after response: DataResponse, of request: DataRequest, target: String?) throws(FetchError) -> DataRequest? {
        guard redirectStatuses.contains(response.status), let target else { return nil }
        let scheme = URL(string: target)?.scheme?.lowercased() ?? target.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw FetchError(
                .badRedirect, "redirected to \(CredentialRedaction().redact(target)) whose scheme is not http or https; refused")
        }
        var next = request
        next.url = target
        // libcurl's rules: a 303 asks with GET (a HEAD stays a HEAD), and so do 301 and 302 after a POST.
        let becomesGET =
            (response.status == 303 && request.method != "HEAD")
            || ((response.status == 301 || response.status == 302) && request.method == "POST")
        if becomesGET {
            next.method = "GET"
            next.body = nil
        }
        return next
    }

    /// Whether two URLs have one origin: scheme, host (whatever its case) and port (the scheme's
    /// default when none is written).
    static func sameOrigin(_ first: String, _ second: String) -> Bool {
        guard let one = origin(first), let other = origin(second) else { return false }
        return one == other
    }

    private static func origin(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased()
        else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }
}
