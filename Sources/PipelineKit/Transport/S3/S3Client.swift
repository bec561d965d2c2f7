import Foundation
import Vips

/// One object a listing found.
struct S3Object: Sendable, Equatable {
    let key: String
    /// With its quotes, as S3 sends it: the object's version for incremental runs and the cache.
    let etag: String?
    let size: Int64?
}

/// The S3 operations a run needs, as signed libcurl requests through a `RemoteFetcher`, so
/// they get the same retries, timeouts and `maxBytes` as HTTP inputs.
struct S3Client: Sendable {
    let configuration: S3Configuration
    let fetcher: RemoteFetcher
    /// Whether this server signs `/` in a query as sent rather than as `%2F` (see `list`).
    private let rawSlashes = QuerySlashes()
    /// Whether the endpoint answers, shared by the copies of a client, so that one found silent
    /// fails the requests that follow at once.
    let reach = EndpointReach()

    /// The request for `method` on the object at `location`, signed.
    ///
    /// Query parameters are sorted and encoded as Signature Version 4 requires, since libcurl
    /// 7.88's signer uses the query as given.
    func request(
        _ method: String, _ location: S3Location, query: [(String, String)] = [], headers: [String: String] = [:],
        body: Data? = nil, maxBytes: Int64, rawSlashes: Bool = false
    ) -> DataRequest {
        var request = DataRequest(url: url(location, query: query, rawSlashes: rawSlashes), headers: headers, maxBytes: maxBytes)
        request.method = method
        request.body = body
        request.signing = AWSSigning(credentials: configuration.credentials, region: configuration.region, service: "s3")
        return request
    }

    /// The object's URL: path-style on a custom endpoint, virtual-hosted on AWS (path-style
    /// there too for a bucket with dots, which TLS certificates of `*.s3…` cannot cover).
    func url(_ location: S3Location, query: [(String, String)] = [], rawSlashes: Bool = false) -> String {
        let key = Self.encode(location.key, keepingSlashes: true)
        var url: String
        if let endpoint = configuration.endpoint {
            url = "\(endpoint)/\(location.bucket)/\(key)"
        } else if location.bucket.contains(".") {
            url = "https://s3.\(configuration.region).amazonaws.com/\(location.bucket)/\(key)"
        } else {
            url = "https://\(location.bucket).s3.\(configuration.region).amazonaws.com/\(key)"
        }
        if !query.isEmpty {
            let pairs = query.map { (Self.encode($0.0, keepingSlashes: false), Self.encode($0.1, keepingSlashes: rawSlashes)) }
            url += "?" + pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        }
        return url
    }

    /// URI-encodes as Signature Version 4 does: every byte but `A-Z a-z 0-9 - _ . ~` (and `/`
    /// in a key) as `%XX`, upper case.
    static func encode(_ text: String, keepingSlashes: Bool) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                encoded += "/"
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    /// The server asked, for a reason that doubts it is S3: the endpoint (credentials in it
    /// hidden), which four places may set, or AWS's.
    var endpointDescription: String {
        shownEndpoint.map { "the endpoint \($0)" } ?? "AWS's endpoint"
    }

    /// The custom endpoint as messages show it, its credentials hidden; nil for AWS's.
    var shownEndpoint: String? {
        configuration.endpoint.map { CredentialRedaction().redact($0) }
    }

    /// How reasons name an operation on an object.
    static func label(_ operation: String, _ location: S3Location) -> String {
        "S3 \(operation) of \(location) (bucket \"\(location.bucket)\", key \"\(location.key)\")"
    }

    /// A status explanation for `fetcher`: S3's code and message, without the credentials a
    /// server (or a proxy before it) may repeat from the request.
    func explanation(_ operation: String, _ location: S3Location) -> RemoteFetcher.StatusExplanation {
        { [credentials = configuration.credentials] response in
            let error = S3Error(
                operation: operation, bucket: location.bucket, key: location.key, response: response, hiding: credentials)
            return (error.description, error)
        }
    }

    /// Every object whose key starts with `prefix`, page after page (ListObjectsV2 returns at
    /// most 1,000 keys per answer and a continuation token for the next).
    ///
    /// - Throws: `ItemError` for an answer that is not a listing (a web server's page on the
    ///   endpoint), or one that cannot be followed to its end: truncated without a token to go
    ///   on with (a server paging as ListObjects version 1 does), or giving a token again. Either
    ///   would leave keys out, or never end. `CancellationError` once `isCancelled`.
    func list(bucket: String, prefix: String, isCancelled: @escaping @Sendable () -> Bool = { false }) throws -> [S3Object] {
        var objects: [S3Object] = []
        var token: String?
        var tokensGiven: Set<String> = []
        let location = S3Location(bucket: bucket, key: "")
        let label = "S3 ListObjectsV2 of s3://\(bucket)/\(prefix) (bucket \"\(bucket)\", prefix \"\(prefix)\")"
        func unfollowable(_ why: String) -> ItemError {
            ItemError(.network, stage: .fetch, reason: "\(label): \(why)")
        }
        while true {
            if isCancelled() { throw CancellationError() }
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let explain = explanation("ListObjectsV2", S3Location(bucket: bucket, key: prefix))
            // A page of 1,000 keys is a few hundred kilobytes; this bound only stops a runaway answer.
            let page = { (raw: Bool) throws -> RemoteFetcher.Outcome in
                try send(
                    request("GET", location, query: query, maxBytes: 64 << 20, rawSlashes: raw), revalidating: nil,
                    label: label, explain: explain, isCancelled: isCancelled)
            }
            // libcurl 7.88 signs the query as sent. AWS and MinIO sign a prefix's "/" as "%2F", as
            // the specification says; some servers (moto, behind werkzeug) see "/" and sign that.
            // A refused signature for a query holding "/" is tried once the other way, and the
            // way that works is kept for the rest of the run.
            let outcome: RemoteFetcher.Outcome
            let raw = rawSlashes.value
            do {
                outcome = try page(raw)
            } catch let error as ItemError
                where (error.underlyingError as? S3Error)?.code == "SignatureDoesNotMatch"
                && query.contains(where: { $0.1.contains("/") })
            {
                outcome = try page(!raw)
                rawSlashes.value = !raw
            }
            guard case .fetched(let response) = outcome else { break }
            let xml = Substring(String(decoding: response.body, as: UTF8.self))
            guard xml.contains("<ListBucketResult") else {
                let type = response.headers["content-type"].map { "of type \($0)" } ?? "with no Content-Type"
                throw unfollowable(
                    "the answer (HTTP \(response.status), \(response.body.count) bytes \(type)) is not an S3 listing: "
                        + "is \(endpointDescription) an S3 server?")
            }
            for contents in S3XML.elements("Contents", in: xml) {
                guard let key = S3XML.value(of: "Key", in: contents) else { continue }
                objects.append(
                    S3Object(
                        key: key, etag: S3XML.value(of: "ETag", in: contents),
                        size: S3XML.value(of: "Size", in: contents).flatMap { Int64($0) }))
            }
            guard S3XML.value(of: "IsTruncated", in: xml) == "true" else { break }
            guard let next = S3XML.value(of: "NextContinuationToken", in: xml), !next.isEmpty else {
                throw unfollowable(
                    "a page is marked truncated but gives no NextContinuationToken to go on with (the server pages "
                        + "as ListObjects version 1 does): the keys after the first \(objects.count) would be left out")
            }
            guard tokensGiven.insert(next).inserted else {
                throw unfollowable("the server gave a continuation token it had given before: the listing would never end")
            }
            token = next
        }
        return objects
    }

    /// Gets the object (conditionally, when a cached copy is given).
    func get(
        _ location: S3Location, revalidating cached: CachedResponse?, maxBytes: Int64,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws -> RemoteFetcher.Outcome {
        try send(
            request("GET", location, maxBytes: maxBytes), revalidating: cached, label: Self.label("GetObject", location),
            explain: explanation("GetObject", location), isCancelled: isCancelled)
    }

    /// The bytes `bytes` of the object (a `Range` request, answered 206), with its headers.
    func get(_ location: S3Location, bytes: Range<Int64>, isCancelled: @escaping @Sendable () -> Bool) throws -> DataResponse {
        let range = ["range": "bytes=\(bytes.lowerBound)-\(bytes.upperBound - 1)"]
        let outcome = try send(
            request("GET", location, headers: range, maxBytes: Int64(bytes.count)), revalidating: nil,
            label: Self.label("GetObject", location), explain: explanation("GetObject", location), isCancelled: isCancelled)
        guard case .fetched(let response) = outcome else {
            throw ItemError(.network, stage: .fetch, reason: "\(Self.label("GetObject", location)): answered as not modified")
        }
        return response
    }

    /// The object's headers (names lowercased), or nil when there is no such object (or it
    /// may not be read).
    func head(_ location: S3Location, isCancelled: @escaping @Sendable () -> Bool) throws -> [String: String]? {
        // No body is read; the limit must still pass the object's declared length.
        let outcome = try send(
            request("HEAD", location, maxBytes: Int64.max), revalidating: nil, label: Self.label("HeadObject", location),
            accepting: [403, 404], explain: explanation("HeadObject", location), isCancelled: isCancelled)
        guard case .fetched(let response) = outcome, (200..<300).contains(response.status) else { return nil }
        return response.headers
    }

    /// Whether `bucket` exists, asked with `HeadBucket`: false only when S3 says there is no such
    /// bucket (404); nil for any other answer (403 is a role without `s3:ListBucket`), or none
    /// (nor once `isCancelled`).
    func bucketExists(_ bucket: String, isCancelled: @escaping @Sendable () -> Bool) -> Bool? {
        let location = S3Location(bucket: bucket, key: "")
        let outcome = try? fetcher.fetch(
            request("HEAD", location, maxBytes: Int64.max), revalidating: nil, label: "S3 HeadBucket of s3://\(bucket)",
            accepting: [403, 404], explain: explanation("HeadBucket", location), isCancelled: isCancelled)
        guard case .fetched(let response) = outcome else { return nil }
        if response.status == 404 { return false }
        return (200..<300).contains(response.status) ? true : nil
    }

    /// Writes the whole object in one `PUT` (S3 makes it appear at once, never half written),
    /// and gives its `ETag`. Failures are the encode stage's.
    @discardableResult
    func put(_ location: S3Location, body: Data, headers: [String: String], isCancelled: @escaping @Sendable () -> Bool) throws(ItemError)
        -> String
    {
        let outcome: RemoteFetcher.Outcome
        do {
            outcome = try send(
                request("PUT", location, headers: headers, body: body, maxBytes: 1 << 20), revalidating: nil,
                label: Self.label("PutObject", location), explain: explanation("PutObject", location),
                isCancelled: isCancelled)
        } catch let error as ItemError {
            throw ItemError(
                error.kind == .httpStatus ? .writing : error.kind, stage: .encode, reason: error.reason, underlying: error.underlyingError)
        } catch {
            throw ItemError(.writing, stage: .encode, reason: "\(Self.label("PutObject", location)): cancelled", underlying: error)
        }
        // S3 answers a PUT it stored with the object's ETag. A success without one is another
        // server's (a web server or a proxy's login page on the endpoint), and stored nothing.
        guard case .fetched(let response) = outcome, let etag = response.etag else {
            throw ItemError(
                .writing, stage: .encode,
                reason: "\(Self.label("PutObject", location)): the answer has no ETag, which S3 gives every object it stores: "
                    + "is \(endpointDescription) an S3 server?")
        }
        return etag
    }
}

extension S3Client {
    /// Makes `request` through the fetcher, as `RemoteFetcher.fetch` does, unless the endpoint
    /// was found silent (`EndpointReach`): then it fails at once, as a connection that failed.
    func send(
        _ request: DataRequest, revalidating cached: CachedResponse?, label: String, accepting: Set<Int> = [],
        explain: @escaping RemoteFetcher.StatusExplanation, isCancelled: @escaping @Sendable () -> Bool
    ) throws -> RemoteFetcher.Outcome {
        if let refusal = reach.refusal(naming: endpointDescription) {
            let failure = FetchError(.connection, refusal)
            throw ItemError(.network, stage: .fetch, reason: "\(label): \(refusal)", underlying: failure)
        }
        do {
            let outcome = try fetcher.fetch(
                request, revalidating: cached, label: label, accepting: accepting, explain: explain, isCancelled: isCancelled)
            reach.noteAnswered()
            return outcome
        } catch let error as ItemError {
            if let failure = error.underlyingError as? FetchError, failure.isRetryable {
                reach.noteUnanswered(failure.message)
            } else if error.kind == .httpStatus {
                reach.noteAnswered()
            }
            throw error
        }
    }
}

/// What a server was found to expect of a query's slashes, shared by the copies of a client.
private final class QuerySlashes: Sendable {
    private let raw = Locked(false)
    var value: Bool {
        get { raw.withLock { $0 } }
        set { raw.withLock { $0 = newValue } }
    }
}
