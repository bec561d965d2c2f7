import Foundation

/// S3 as a source of inputs: an `s3://bucket/key` names one object, and a glob in the key the
/// objects a listing finds (`S3Store+Listing.swift`). Objects are fetched with a signed
/// GetObject, conditionally when cached, and versioned by their ETag from the listing. A bucket is
/// not watched: its changes are found by listing it again.
extension S3Store: InputSource {
    static func claims(_ address: String) -> Bool { S3Location.isS3(address) }

    static func list(
        _ address: String, at place: String, by enumerator: InputEnumerator, into result: inout InputEnumerator.Result<some InputSink>
    ) -> InputEnumerator.Looked {
        (enumerator.listS3(address, at: place, into: &result), enumerator.emptyHint(address, foldedMatches: 0))
    }

    static let isCached = true
    static let keepsFreshForMaxAge = false

    static func fetch(
        _ input: InputFile, revalidating cached: CachedResponse?, through transports: InputTransports,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws -> SourceFetch {
        let address = input.url ?? input.path
        guard let store = try transports.stores.store(forReading: address) else {
            throw ItemError(.other, stage: .fetch, reason: "\(address) is not an s3://bucket/key address")
        }
        let outcome = try store.get(address, revalidating: cached, maxBytes: transports.web.settings.maxBytes, isCancelled: isCancelled)
        // The object the listing found, by its ETag, in fewer or more bytes than it lists: cut on
        // its way by a gateway that also cut its Content-Length. Cached, it would be answered "not
        // modified" on every later run; failed here, the next run fetches it again. An object
        // stored compressed (`Content-Encoding`) is listed at its stored size and comes decoded.
        if case .fetched(let response) = outcome, response.status == 200, let listed = input.byteCount,
            let etag = response.etag, input.listedVersion == FetchedSource.version(of: address, etag: etag),
            [nil, "identity"].contains(response.headers["content-encoding"]?.lowercased()), Int64(response.body.count) != listed
        {
            let why = Int64(response.body.count) < listed ? "the answer was cut on its way" : "more than the object holds"
            throw ItemError(
                .network, stage: .fetch, reason: "\(address): \(response.body.count) bytes came of the \(listed) its listing gives: \(why)")
        }
        return .answered(outcome)
    }

    static func watchTargets(_ address: String, base: String) -> [WatchScope.Target] { [] }
}
