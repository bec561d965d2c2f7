import CCurl
import Foundation

/// Inputs on the web: an `http://` or `https://` URL names one input, fetched through libcurl
/// (or the embedder's `DataLoading`) with retries, conditionally when cached. A URL is not
/// watched: its changes are found by asking again, as the cache's revalidation does.
enum WebInputs: InputSource {
    static func claims(_ address: String) -> Bool {
        let lowered = address.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    static func list(
        _ address: String, at place: String, by enumerator: InputEnumerator, into result: inout InputEnumerator.Result<some InputSink>
    ) -> InputEnumerator.Looked {
        // What libcurl would refuse at every fetch (a space, a port past 65535, no host) is the
        // file's mistake, said before anything runs.
        if let problem = pl_curl_url_problem(address) {
            let hint = address.contains(" ") ? " (write a space as %20)" : ""
            result.problems.append(
                .init(
                    path: place, location: nil,
                    message: "\(enumerator.redaction.redact(address)) is not a URL libcurl can fetch: \(String(cString: problem))\(hint)"))
            return (nil, "")
        }
        result.add(InputFile(url: address, redaction: enumerator.redaction))
        return (nil, "")
    }

    static let isCached = true
    static let keepsFreshForMaxAge = true

    static func fetch(
        _ input: InputFile, revalidating cached: CachedResponse?, through transports: InputTransports,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws -> SourceFetch {
        .answered(try transports.web.fetch(input.url ?? input.path, revalidating: cached, isCancelled: isCancelled))
    }

    static func watchTargets(_ address: String, base: String) -> [WatchScope.Target] { [] }
}
