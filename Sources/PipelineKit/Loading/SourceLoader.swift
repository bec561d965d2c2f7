import Foundation
import Vips

/// The fetch and cache stages: an input's encoded bytes and their version. A local file is
/// checked where it lies; a URL or an S3 object comes from the cache when fresh, else from the
/// network (conditionally when cached), and goes back into the cache unless the server forbids it.
struct SourceLoader: Sendable {
    let fetchQueue: StageQueue
    let cacheQueue: StageQueue
    let fileFetcher: FileFetcher
    let remoteFetcher: RemoteFetcher
    let cache: (any DataCaching)?
    let s3: S3Access

    /// Throws an `ItemError` of the fetch stage, or `CancellationError` when the run was cancelled
    /// while the work was queued.
    func load(_ input: InputFile) async throws -> FetchedSource {
        guard let url = input.url else {
            return try await fetchQueue.run(for: input.displayName) { [fileFetcher] in try fileFetcher.fetch(input) }
        }
        let cached = try await cacheQueue.run(for: input.displayName) { [cache] in cache?.cachedResponse(for: url) }
        if let cached, cached.isFresh() {
            return FetchedSource(cached)
        }
        let outcome = try await fetchQueue.run(for: input.displayName) { [remoteFetcher, s3] isCancelled in
            guard let location = input.s3Location else {
                return try remoteFetcher.fetch(url, revalidating: cached, isCancelled: isCancelled)
            }
            let client: S3Client
            do throws(S3Configuration.Failure) {
                client = try s3.client()
            } catch {
                throw ItemError(.other, stage: .fetch, reason: "\(S3Client.label("GetObject", location)): \(error.message)", underlying: error)
            }
            return try client.get(location, revalidating: cached, maxBytes: remoteFetcher.settings.maxBytes, isCancelled: isCancelled)
        }
        let entry: CachedResponse
        let control: CacheControl
        if case .fetched(let response) = outcome, response.body.isEmpty {
            throw ItemError(.unreadable, stage: .fetch, reason: ItemError.emptyFile)
        }
        switch outcome {
        case .notModified(let response):
            guard let cached else { throw ItemError(.httpStatus, stage: .fetch, reason: "HTTP 304 without a cached copy") }
            control = CacheControl(response.headers["cache-control"])
            entry = cached.revalidated(by: response, control: control)
        case .fetched(let response):
            control = CacheControl(response.headers["cache-control"])
            entry = CachedResponse(url: url, body: response.body, etag: response.etag, lastModified: response.lastModified,
                                   storedAt: Date(), maxAge: control.freshness)
        }
        // A response nothing can revalidate or keep fresh would only be fetched again: not stored.
        if !control.noStore, let cache, entry.etag != nil || entry.lastModified != nil || entry.maxAge != nil {
            try await cacheQueue.run(for: input.displayName) { cache.store(entry) }
        }
        return FetchedSource(entry)
    }
}

extension CachedResponse {
    /// This response, confirmed unchanged by a `304` now: fresh again for as long as the
    /// server now says, with the validators it sent (or the ones kept).
    func revalidated(by response: DataResponse, control: CacheControl) -> CachedResponse {
        var refreshed = self
        refreshed.storedAt = Date()
        refreshed.maxAge = control.freshness ?? maxAge
        refreshed.etag = response.etag ?? etag
        refreshed.lastModified = response.lastModified ?? lastModified
        return refreshed
    }
}

extension FetchedSource {
    /// A fetched or cached response's bytes, versioned by its validator.
    init(_ response: CachedResponse) {
        let version = response.etag.map { "etag:\(response.url) \($0)" }
            ?? response.lastModified.map { "modified:\(response.url) \($0)" }
        self.init(source: .memory(VipsBytes(response.body)), version: version)
    }
}
