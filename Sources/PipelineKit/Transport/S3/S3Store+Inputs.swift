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
        return .answered(try store.get(address, revalidating: cached, maxBytes: transports.web.settings.maxBytes, isCancelled: isCancelled))
    }

    static func watchTargets(_ address: String, base: String) -> [WatchScope.Target] { [] }
}
