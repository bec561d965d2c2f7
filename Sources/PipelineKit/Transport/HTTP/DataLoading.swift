import Foundation

/// Fetches the bytes of a remote input: libcurl by default (`CurlDataLoader`); an embedding
/// program may supply its own (a mock, a signed-URL client, …).
///
/// `load` blocks its thread: the runner calls it on the fetch stage's queue, never on Swift's
/// cooperative pool. It makes one attempt; the runner retries, honours `Retry-After` and
/// consults the cache.
public protocol DataLoading: Sendable {
    /// Makes `request` once and returns what the server answered, whatever its status; throws
    /// when no answer came (or `isCancelled` turned true, which the loader checks as it goes).
    func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse
}

/// One HTTP(S) request: a GET of an input, or (for S3) a signed GET, HEAD, PUT or listing.
public struct DataRequest: Sendable, Equatable {
    /// The URL to ask, http or https.
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
    /// Whether the loader's own headers (the pipeline file's `fetch.headers`,
    /// `CurlDataLoader.Settings.headers`) go with the request to its URL's origin: an input's
    /// do; a step's overlay's do not, as they were written for the inputs' server.
    public var sendsFileHeaders = true

    /// A `GET` of `url` with `headers`, its body bounded by `maxBytes`.
    public init(url: String, headers: [String: String] = [:], maxBytes: Int64) {
        self.url = url
        self.headers = headers
        self.maxBytes = maxBytes
    }
}

/// What a server answered.
public struct DataResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The body, as received (empty for a `HEAD` or a `304`).
    public var body: Data
    /// Response headers, names lowercased.
    public var headers: [String: String]

    /// A response with `status`, `body` and `headers` (names lowercased).
    public init(status: Int, body: Data, headers: [String: String]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// The `ETag` header: the version a conditional request asks about next time.
    public var etag: String? { headers["etag"] }
    /// The `Last-Modified` header, for a conditional request when there is no `ETag`.
    public var lastModified: String? { headers["last-modified"] }
}

/// Why a fetch failed.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, which decides whether it is retried.
    public enum Kind: Sendable, Equatable {
        /// DNS, refused or reset connections: worth retrying.
        case connection
        /// The request took longer than its timeout: worth retrying.
        case timeout
        /// The body is longer than the request's `maxBytes`.
        case tooLarge
        /// A redirect to a scheme other than http or https, or too many redirects.
        case badRedirect
        /// The request itself cannot be made (bad URL, unsupported scheme).
        case invalidRequest
        /// The run was cancelled while the request was under way.
        case cancelled
        /// Any other failure, not retried.
        case other
    }

    /// What kind of failure it is.
    public let kind: Kind
    /// The reason, as a report shows it.
    public let message: String
    /// Whether the request's own server gave no answer at all (its name not found, the
    /// connection refused, the time up), which says the same of every other request to it:
    /// false once it answered (a body cut short), and for a failure at a redirect's target,
    /// another server.
    var foundNoServer = false

    /// A failure of `kind`, for `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// A failure of `kind`, for `message`, of a server that gave no answer at all.
    init(noServer kind: Kind, _ message: String) {
        self.init(kind, message)
        foundNoServer = true
    }

    /// The reason (`message`).
    public var description: String { message }

    var isRetryable: Bool { kind == .connection || kind == .timeout }
}
