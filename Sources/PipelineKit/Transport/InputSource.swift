import Foundation

/// A kind of place inputs come from, chosen by the address an `inputs` entry (or a line of a
/// list file) writes: local files for a path or a glob, the web for `http://` and `https://`, an
/// object store for its scheme (`s3://`).
///
/// Each source lives in a folder of its own under `Transport/` and is registered in
/// `InputSources.registered`, as processors are in their registry: the planner, the fetch stage
/// and `watch` ask `InputSources` for an address's source and never name a source's own types.
/// A source answers the four things a run asks of an input:
/// - **list:** the inputs an address names (`list`);
/// - **version:** what identifies the bytes, from the listing when it says
///   (`InputFile.listedVersion`, which lets an up-to-date run fetch nothing), else from the fetch
///   (`FetchedSource.version`);
/// - **fetch:** the bytes, or where they lie (`fetch`);
/// - **watch:** what `pipeline watch` listens to for the address (`watchTargets`); nothing for a
///   source whose changes are found only by asking it again.
protocol InputSource: Sendable {
    /// Whether `address` is this source's.
    static func claims(_ address: String) -> Bool

    /// Hands the inputs `address` names to `result` (through `enumerator`, which knows the base
    /// folder, the credentials' redaction and the stores); `place` is the entry's JSON path, for
    /// problems. Returns where it looked, and what to add to "matches no files".
    static func list(
        _ address: String, at place: String, by enumerator: InputEnumerator, into result: inout InputEnumerator.Result<some InputSink>
    ) -> InputEnumerator.Looked

    /// Whether fetched bytes go through the run's cache: true for a source read over a network,
    /// false for one read where its bytes lie.
    static var isCached: Bool { get }

    /// Whether a cached copy is used without asking while its `max-age` lasts: true for a web
    /// server, which sets it for its readers. A bucket object's `Cache-Control` is for those the
    /// bucket publishes to (a CDN, browsers); a run asks the bucket each time, which answers an
    /// unchanged object's ETag with 304 and nothing more.
    static var keepsFreshForMaxAge: Bool { get }

    /// Reads `input` once, blocking: call it on the fetch lane. `cached` is the cache's copy, for
    /// a conditional request; the fetch stage retries, revalidates and caches around it.
    static func fetch(
        _ input: InputFile, revalidating cached: CachedResponse?, through transports: InputTransports,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws -> SourceFetch

    /// What `pipeline watch` listens to for `address`, relative to `base` (the folder of the
    /// pipeline file or list file that wrote it).
    static func watchTargets(_ address: String, base: String) -> [WatchScope.Target]
}

/// What one fetch of an input gave.
enum SourceFetch {
    /// The bytes where they lie, checked and versioned (a local file).
    case inPlace(FetchedSource)
    /// A server's final answer: new bytes, or "not modified" for the cached copy.
    case answered(RemoteFetcher.Outcome)
}

/// The run's means of reading inputs, one for each kind of transport, which sources fetch through.
struct InputTransports: Sendable {
    let files: FileFetcher
    var web: RemoteFetcher
    let stores: ObjectStoreAccess
}

/// The input sources this build knows.
enum InputSources {
    /// One entry per source, asked in order: sources named by a scheme first, local files last,
    /// since they take every address that is not another's.
    static let registered: [any InputSource.Type] = [WebInputs.self, S3Store.self, LocalFiles.self]

    /// The source `address` is read from.
    static func source(of address: String) -> any InputSource.Type {
        registered.first { $0.claims(address) } ?? LocalFiles.self
    }

    /// The source a planned input is read from: its URL's or object address's, else local files.
    static func source(of input: InputFile) -> any InputSource.Type {
        input.url.map { source(of: $0) } ?? LocalFiles.self
    }

    /// The scheme of `address` when it has one no source reads (`ftp://`, `file://`), which is no
    /// input; nil for an address a source reads, and for a path.
    static func unsupportedScheme(_ address: String) -> String? {
        guard ObjectIdentifier(source(of: address)) == ObjectIdentifier(LocalFiles.self), let range = address.range(of: "://") else {
            return nil
        }
        let scheme = address[..<range.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+.-".contains($0) }) else { return nil }
        return String(scheme)
    }
}
