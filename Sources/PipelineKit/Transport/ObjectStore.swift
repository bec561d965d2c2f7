import Foundation

/// A kind of object store that outputs are written to and inputs listed in, named by the scheme
/// of its addresses (`s3://BUCKET/KEY`).
///
/// Each store lives in a folder of its own under `Transport/` and is registered in
/// `ObjectStores.registered`, so code outside that folder asks `ObjectStores` and
/// `ObjectLocation`, never the store's own types.
protocol ObjectStoreKind: Sendable {
    /// The scheme, lowercased, without `://`.
    static var scheme: String { get }
    /// The store's name in messages ("S3").
    static var displayName: String { get }
    /// The longest key the store takes, in UTF-8 bytes; no limit is set on a name within it.
    static var maxKeyBytes: Int { get }
}

/// The object stores this build knows, keyed by the scheme of their addresses.
public enum ObjectStores {
    /// One entry per store; a new store adds its kind here.
    static let registered: [any ObjectStoreKind.Type] = [S3Store.self]

    /// The store whose scheme `address` starts with (in any case, as URL schemes are).
    static func kind(of address: String) -> (any ObjectStoreKind.Type)? {
        guard let range = address.range(of: "://") else { return nil }
        let scheme = address[..<range.lowerBound].lowercased()
        return registered.first { $0.scheme == scheme }
    }

    /// Whether `address` names an object (or a prefix) in a registered store, not a local path or
    /// a web URL.
    public static func isObject(_ address: String) -> Bool { kind(of: address) != nil }

    /// The name messages give the store `address` is in ("S3"); nil for a local path or a URL.
    public static func displayName(of address: String) -> String? { kind(of: address)?.displayName }

    /// What `path` is when it is no local path, for a message about a file written on this
    /// machine (`an S3 address`, `a URL`), where it would make a folder named after its scheme;
    /// nil for a local path.
    package static func notALocalPath(_ path: String) -> String? {
        displayName(of: path).map { "an \($0) address" } ?? (path.contains("://") ? "a URL" : nil)
    }
}

/// An object (or a prefix) in a registered store, whatever the store: its scheme, container
/// (a bucket) and key.
public struct ObjectLocation: Sendable, Hashable, CustomStringConvertible {
    /// The store's scheme, lowercased (`s3`).
    public let scheme: String
    /// The bucket (or container) the object is in.
    public let container: String
    /// The key as written after the container, not percent-encoded; may be empty (the whole container).
    public let key: String

    /// The object `key` in `container` of the store named by `scheme`.
    public init(scheme: String, container: String, key: String) {
        self.scheme = scheme.lowercased()
        self.container = container
        self.key = key
    }

    /// Reads `SCHEME://container/key` for a registered store; nil for any other text or an
    /// address without a container.
    public init?(_ text: String) {
        guard let kind = ObjectStores.kind(of: text) else { return nil }
        let rest = text.dropFirst(kind.scheme.count + 3)
        let container = rest.prefix { $0 != "/" }
        guard !container.isEmpty else { return nil }
        self.init(scheme: kind.scheme, container: String(container), key: String(rest.dropFirst(container.count + 1)))
    }

    /// The address, `SCHEME://container/key`.
    public var description: String { "\(scheme)://\(container)/\(key)" }
}

/// What a store says of one object without reading it: the user metadata an output was written
/// with, its size, and its version.
struct StoredObject: Sendable, Equatable {
    /// The user metadata, by name without the store's prefix (`fingerprint`, `width`).
    let metadata: [String: String]
    /// The object's length in bytes; 0 when the store did not say.
    let byteCount: Int
    /// The store's name for this version of the object (S3's `ETag`), when it gave one.
    var version: String? = nil
}

/// One store's objects, for one run: what the runner asks of an output kept in it.
protocol ObjectStoring: Sendable {
    /// The object at `address`, read whole, conditionally when `cached` is given; at most
    /// `maxBytes`. Blocking: call it on a lane.
    func get(
        _ address: String, revalidating cached: CachedResponse?, maxBytes: Int64, isCancelled: @escaping @Sendable () -> Bool
    ) throws -> RemoteFetcher.Outcome

    /// The bytes `bytes` of the object at `address` (a ranged read), with its headers, which
    /// say the object's whole length (`Content-Range`). Blocking: call it off the cooperative pool.
    func get(_ address: String, bytes: Range<Int64>, isCancelled: @escaping @Sendable () -> Bool) throws -> DataResponse

    /// The object at `address`, or nil when there is none. Blocking: call it on a lane.
    func head(_ address: String, isCancelled: @escaping @Sendable () -> Bool) throws -> StoredObject?

    /// Writes the whole object at `address` at once (never half written), with its content
    /// type, its cache control and its user `metadata` (by name without the store's prefix),
    /// and gives the store's name for the version written (S3's `ETag`). Blocking; failures are
    /// the encode stage's.
    @discardableResult
    func put(
        _ address: String, body: Data, contentType: String, cacheControl: String?, metadata: [String: String],
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(ItemError) -> String
}

/// A store's answer with an HTTP status, so that a server error (5xx) reads as the store being
/// unavailable, as it does for a URL.
protocol ObjectStoreStatusError: Error {
    /// The HTTP status of the store's answer.
    var status: Int { get }
}
