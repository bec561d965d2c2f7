import Foundation

/// Fetches the bytes of a remote input: libcurl by default (`CurlDataLoader`); an embedding
/// program may supply its own (a mock, a signed-URL client, …).
///
/// `load` blocks its thread: the runner calls it on the fetch stage's queue, never on Swift's
/// cooperative pool. It makes one attempt; the runner retries, honours `Retry-After` and
/// consults the cache.
public protocol DataLoading: Sendable {
    func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse
}

/// One HTTP(S) request: a GET of an input, or (for S3) a signed GET, HEAD, PUT or listing.
public struct DataRequest: Sendable, Equatable {
    public var url: String
    /// Extra request headers, for example a conditional `If-None-Match`.
    public var headers: [String: String]
    /// Bodies longer than this fail (`FetchError.Kind.tooLarge`), aborted as soon as known.
    public var maxBytes: Int64
    /// `GET` unless said otherwise; a `HEAD` reads the headers only.
    public var method: String = "GET"
    /// The bytes to send (for a `PUT`), or nil.
    public var body: Data? = nil
    /// AWS Signature Version 4 for the request, or nil for an unsigned one. A loader that cannot
    /// sign must refuse signed requests rather than send them unsigned.
    public var signing: AWSSigning? = nil

    public init(url: String, headers: [String: String] = [:], maxBytes: Int64) {
        self.url = url
        self.headers = headers
        self.maxBytes = maxBytes
    }
}

/// What a server answered.
public struct DataResponse: Sendable {
    public var status: Int
    public var body: Data
    /// Response headers, names lowercased.
    public var headers: [String: String]

    public init(status: Int, body: Data, headers: [String: String]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    public var etag: String? { headers["etag"] }
    public var lastModified: String? { headers["last-modified"] }
}

/// Why a fetch failed.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// DNS, refused or reset connections: worth retrying.
        case connection
        case timeout
        case tooLarge
        /// A redirect to a scheme other than http or https, or too many redirects.
        case badRedirect
        /// The request itself cannot be made (bad URL, unsupported scheme).
        case invalidRequest
        case cancelled
        case other
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    var isRetryable: Bool { kind == .connection || kind == .timeout }
}
