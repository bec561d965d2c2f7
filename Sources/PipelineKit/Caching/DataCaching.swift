import Foundation

/// Keeps fetched bytes between runs, keyed by URL: the disk cache by default (`DiskCache`);
/// an embedding program may supply its own. Called on the cache stage's queue.
public protocol DataCaching: Sendable {
    /// The stored response for `url`, or nil. A store must never return a damaged entry.
    func cachedResponse(for url: String) -> CachedResponse?
    /// Stores (or replaces) the response for its URL. Failing to store is not an error of the
    /// item: the bytes were fetched.
    func store(_ response: CachedResponse)
    /// The first reason a `store` failed since the store was made, naming the file and the
    /// system's reason, for the run's warnings; nil when every one succeeded.
    var writeProblem: String? { get }
}

extension DataCaching {
    /// A store that cannot fail to write, or does not say.
    public var writeProblem: String? { nil }
}

/// A response kept in a cache, with what is needed to revalidate it.
public struct CachedResponse: Sendable, Codable, Equatable {
    /// The URL the response is for.
    public var url: String
    /// The bytes the server sent.
    public var body: Data
    /// The server's `ETag`, to ask whether the bytes changed (`If-None-Match`).
    public var etag: String?
    /// The server's `Last-Modified`, to ask the same when there is no ETag (`If-Modified-Since`).
    public var lastModified: String?
    /// When the response was fetched or last revalidated.
    public var storedAt: Date
    /// Seconds the response may be used without asking the server (`Cache-Control: max-age`),
    /// nil when the server said nothing: then every run revalidates.
    public var maxAge: Double?

    /// A response to keep, with its validators and freshness.
    public init(url: String, body: Data, etag: String?, lastModified: String?, storedAt: Date, maxAge: Double?) {
        self.url = url
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.storedAt = storedAt
        self.maxAge = maxAge
    }

    /// Whether it may be used now without asking the server.
    public func isFresh(at now: Date = Date()) -> Bool {
        guard let maxAge else { return false }
        return now.timeIntervalSince(storedAt) < maxAge
    }

    /// The headers of a conditional request that a `304 Not Modified` answers: the ETag alone
    /// when there is one. A server should then ignore `If-Modified-Since`, but some (moto) ask it
    /// first, and `Last-Modified` counts whole seconds: bytes replaced within the second of the
    /// copy were answered 304, and the old copy made into files of the new version.
    var validatingHeaders: [String: String] {
        if let etag { return ["If-None-Match": etag] }
        return lastModified.map { ["If-Modified-Since": $0] } ?? [:]
    }
}

extension CachedResponse {
    /// The longest `ETag` or `Last-Modified` kept, far past any server's own: one longer would be
    /// sent back with every request, which the server may refuse (431), failing the input on
    /// every run.
    static let longestValidator = 1024

    /// `validator`, when it is short enough to send back; else nil.
    static func kept(_ validator: String?) -> String? {
        validator.flatMap { $0.utf8.count <= longestValidator ? $0 : nil }
    }
}

/// What `Cache-Control` allows.
struct CacheControl: Equatable {
    var noStore = false
    var noCache = false
    var maxAge: Double?
    /// Seconds the response had spent in caches on its way (`Age`), which its freshness
    /// counts from.
    var age: Double = 0

    /// What `header` (`Cache-Control`) allows of a response whose `Age` header is `age`.
    init(_ header: String?, age: String? = nil) {
        self.age = age.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.map { max(0, $0) } ?? 0
        guard let header else { return }
        for directive in header.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            switch parts.first {
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "max-age": maxAge = parts.count == 2 ? Double(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) : nil
            default: break
            }
        }
    }

    /// Seconds the response is fresh for from now, its age taken off: none when the server asks
    /// to revalidate every time.
    var freshness: Double? { noCache ? nil : maxAge.map { max(0, $0 - age) } }
}
