import Foundation
import Vips

/// The fetch and cache stages: an input's encoded bytes and their version, from the source that
/// reads it (`InputSources`). A local file is checked where it lies; a URL or an object in a store
/// comes from the cache when fresh, else from its server (conditionally when cached), and goes
/// back into the cache unless the server forbids it. When the server cannot be reached or fails,
/// a cached copy stands in (`fetch.staleIfError`).
struct SourceLoader: Sendable {
    let fetchQueue: StageQueue
    let cacheQueue: StageQueue
    private(set) var transports: InputTransports
    let cache: (any DataCaching)?
    /// How many inputs this run took from the cache because their server failed.
    let servedStale = Locked(0)
    /// Origins (scheme, host and port) this run could not reach: later inputs from them that are
    /// cached do not wait for connection timeouts and retries again.
    let unreachableOrigins = Locked<Set<String>>([])

    /// The loader a run of `definition` fetches through, on `queues`' fetch and cache lanes.
    init(
        _ definition: PipelineDefinition, queues: StageQueues, dataLoader: any DataLoading, cache: (any DataCaching)?,
        stores: ObjectStoreAccess
    ) {
        fetchQueue = queues.fetch
        cacheQueue = queues.cache
        transports = InputTransports(
            files: FileFetcher(maxBytes: definition.fetch.maxBytes), web: RemoteFetcher(loader: dataLoader, settings: definition.fetch),
            stores: stores)
        self.cache = cache
    }

    /// This loader, for images that are not inputs (a step's overlay): the same stages, cache and
    /// counts, but its URLs are asked without the file's `fetch.headers`, which are the inputs'.
    var withoutFileHeaders: SourceLoader {
        var loader = self
        loader.transports.web.sendsFileHeaders = false
        return loader
    }

    /// Where the cache keeps the answer for `address`: under the URL, or, asked without the
    /// file's `fetch.headers` when it has some (an overlay), under a key of its own, so that an
    /// input of the same URL is never given the answer to a request without them, nor the
    /// overlay an answer to one with them.
    ///
    /// Asked with them, the key names a digest of them: pipeline files that share a cache folder
    /// but not their headers (credentials) do not share answers either.
    private func cacheKey(for address: String) -> String {
        let headers = transports.web.settings.headers
        guard !headers.isEmpty else { return address }
        guard transports.web.sendsFileHeaders else { return address + " without fetch.headers" }
        let named = headers.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { "\($0.key.lowercased()): \($0.value)\n" }
        return address + " with fetch.headers " + SHA256.hex(Data(named.joined().utf8))
    }

    /// Throws an `ItemError` of the fetch stage, or `CancellationError` when the run was cancelled
    /// while the work was queued.
    func load(_ input: InputFile) async throws -> FetchedSource {
        let source = InputSources.source(of: input)
        let address = input.url ?? input.path
        let key = cacheKey(for: address)
        let cached =
            source.isCached ? try await cacheQueue.run(for: input.displayName) { [cache] in cache?.cachedResponse(for: key) } : nil
        let maxBytes = transports.web.settings.maxBytes
        if let cached, cached.body.count > maxBytes {
            // Stored under a larger limit: held to this one, as its download would be.
            throw ItemError(
                .tooLarge, stage: .fetch,
                reason: "the cached copy is \(cached.body.count) bytes, more than fetch.maxBytes (\(maxBytes) bytes)")
        }
        if let cached, source.keepsFreshForMaxAge, cached.isFresh() {
            return FetchedSource(cached)
        }
        let fetched: SourceFetch
        do {
            fetched = try await fetchOnce(input, from: source, address: address, revalidating: cached)
        } catch {
            guard let stale = staleCopy(cached, after: error) else { throw error }
            return stale
        }
        let outcome: RemoteFetcher.Outcome
        switch fetched {
        case .inPlace(let source): return source
        case .answered(let answer): outcome = answer
        }
        let entry: CachedResponse
        let control: CacheControl
        if case .fetched(let response) = outcome, response.body.isEmpty {
            throw ItemError(.unreadable, stage: .fetch, reason: ItemError.emptyFile)
        }
        switch outcome {
        case .notModified(let response):
            guard let cached else { throw ItemError(.httpStatus, stage: .fetch, reason: "HTTP 304 without a cached copy") }
            control = CacheControl(response.headers["cache-control"], age: response.headers["age"])
            entry = cached.revalidated(by: response, control: control)
        case .fetched(let response):
            control = CacheControl(response.headers["cache-control"], age: response.headers["age"])
            entry = CachedResponse(
                url: key, body: response.body, etag: CachedResponse.kept(response.etag),
                lastModified: CachedResponse.kept(response.lastModified),
                storedAt: Date(), maxAge: control.freshness)
        }
        // A response nothing can revalidate or keep fresh would only be fetched again: not stored.
        if source.isCached, !control.noStore, let cache, entry.etag != nil || entry.lastModified != nil || entry.maxAge != nil {
            try await cacheQueue.run(for: input.displayName) { cache.store(entry) }
        }
        return FetchedSource(entry)
    }

    /// One fetch of `input` from its source on the fetch queue, conditional when `cached` is given.
    private func fetchOnce(
        _ input: InputFile, from source: any InputSource.Type, address: String, revalidating cached: CachedResponse?
    ) async throws -> SourceFetch {
        try await fetchQueue.run(for: input.displayName) { [self, transports] isCancelled in
            // Checked and noted on the fetch queue, so that inputs queued behind the first
            // failure see it.
            if let unreachable = knownUnreachable(address, cached: cached) { throw unreachable }
            do {
                return try source.fetch(input, revalidating: cached, through: transports, isCancelled: isCancelled)
            } catch {
                noteIfUnreachable(address, error)
                throw error
            }
        }
    }

    /// The cached copy, counted, when `fetch.staleIfError` lets it stand in for a fetch that
    /// failed with `error` because the origin is unavailable (not for a 404, a refused redirect,
    /// a body too large or a cancelled run: those say something about the input itself).
    private func staleCopy(_ cached: CachedResponse?, after error: any Error) -> FetchedSource? {
        guard transports.web.settings.staleIfError, let cached, let error = error as? ItemError,
            error.meansOriginUnavailable
        else { return nil }
        servedStale.withLock { $0 += 1 }
        return FetchedSource(cached)
    }

    /// Notes the origin of `url` as unreachable when `error` says it gave no answer at all. A
    /// server that answers 5xx, or cuts one body short, may fail one path only, and a redirect's
    /// target is another server; one that cannot be reached fails them all.
    private func noteIfUnreachable(_ url: String, _ error: any Error) {
        guard let error = error as? ItemError, (error.underlyingError as? FetchError)?.foundNoServer == true,
            let origin = Self.origin(of: url)
        else { return }
        unreachableOrigins.withLock { _ = $0.insert(origin) }
    }

    /// The failure to report, without asking, for an input with a cached copy whose origin was
    /// found unreachable earlier in this run (`staleCopy` then serves the copy); nil to ask.
    private func knownUnreachable(_ url: String, cached: CachedResponse?) -> ItemError? {
        guard transports.web.settings.staleIfError, cached != nil, let origin = Self.origin(of: url),
            unreachableOrigins.withLock({ $0.contains(origin) })
        else { return nil }
        let failure = FetchError(.connection, "\(origin) could not be reached earlier in this run")
        return ItemError(.network, stage: .fetch, reason: failure.message, underlying: failure)
    }

    /// `scheme://host:port` of a URL, or nil.
    private static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else { return nil }
        return "\(scheme.lowercased())://\(host.lowercased()):\(components.port.map(String.init) ?? "")"
    }
}

extension ItemError {
    /// Whether a fetch failed because its server could not be reached (refused, DNS, timeout,
    /// reset) or answered with a server error, as opposed to an answer about the input.
    var meansOriginUnavailable: Bool {
        switch underlyingError {
        case let failure as FetchError: failure.isRetryable
        case let status as HTTPStatusError: (500..<600).contains(status.status)
        case let store as any ObjectStoreStatusError: (500..<600).contains(store.status)
        default: false
        }
    }
}

extension CachedResponse {
    /// This response, confirmed unchanged by a `304` now: fresh again for as long as the
    /// server now says, with the validators it sent (or the ones kept).
    func revalidated(by response: DataResponse, control: CacheControl) -> CachedResponse {
        var refreshed = self
        refreshed.storedAt = Date()
        refreshed.maxAge = control.freshness ?? maxAge
        refreshed.etag = Self.kept(response.etag) ?? etag
        refreshed.lastModified = Self.kept(response.lastModified) ?? lastModified
        return refreshed
    }
}

extension FetchedSource {
    /// A fetched or cached response's bytes, versioned by its validator, or by their hash when
    /// the server sent none: the bytes are here anyway, and an unchanged input is not made again.
    init(_ response: CachedResponse) {
        let version =
            response.etag.map { Self.version(of: response.url, etag: $0) }
            ?? response.lastModified.map { "modified:\(response.url) \($0)" }
            ?? "sha256:\(response.url) \(SHA256.hex(response.body))"
        self.init(source: .memory(VipsBytes(response.body)), version: version)
    }

    /// The version of the resource at `url` whose validator is `etag`: what a fetch gives, and
    /// what a listing (an S3 object's) gives before any fetch, so that the two compare.
    static func version(of url: String, etag: String) -> String { "etag:\(url) \(etag)" }
}
