import CCurl
import Foundation
import Vips

/// The default `DataLoading`: libcurl, following redirects to http and https only, with
/// connections kept alive between transfers (HTTP/2 where the server offers it).
///
/// Easy handles are pooled: each keeps its own connection cache, so a handle taken again for
/// the same host reuses the open connection.
public final class CurlDataLoader: DataLoading {
    /// Settings every transfer shares.
    public struct Settings: Sendable {
        public var timeout: Double
        public var connectTimeout: Double
        public var maxRedirects: Int
        public var userAgent: String
        public var headers: [String: String]

        public init(timeout: Double = 30, connectTimeout: Double = 10, maxRedirects: Int = 5,
                    userAgent: String = "pipeline/\(PipelineKitInfo.version)", headers: [String: String] = [:]) {
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.maxRedirects = maxRedirects
            self.userAgent = userAgent
            self.headers = headers
        }
    }

    private let settings: Settings
    private let idleHandles = Locked<[EasyHandle]>([])

    public init(settings: Settings = Settings()) {
        CurlGlobal.start()
        self.settings = settings
    }

    /// libcurl configured from a pipeline file's `fetch` section.
    public convenience init(fetch: FetchSettings) {
        self.init(settings: Settings(timeout: fetch.timeout, connectTimeout: fetch.connectTimeout, maxRedirects: fetch.maxRedirects,
                                     userAgent: fetch.userAgent, headers: fetch.headers))
    }

    public func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse {
        guard let scheme = URL(string: request.url)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw FetchError(.invalidRequest, "only http and https URLs can be fetched")
        }
        let handle = idleHandles.withLock { $0.popLast() } ?? EasyHandle()
        guard let easy = handle.pointer else { throw FetchError(.other, "libcurl could not create a transfer") }
        defer {
            curl_easy_reset(easy)
            idleHandles.withLock { $0.append(handle) }
        }
        let transfer = Transfer(maxBytes: request.maxBytes, isCancelled: isCancelled)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        // The file's extra headers are for HTTP inputs; a signed request carries only its own.
        var allHeaders = request.signing == nil ? settings.headers.merging(request.headers) { _, perRequest in perRequest } : request.headers
        if let signing = request.signing { Self.addSigningHeaders(signing, body: request.body, to: &allHeaders) }
        if request.body != nil, !allHeaders.keys.contains(where: { $0.lowercased() == "content-type" }) {
            allHeaders["Content-Type"] = "application/octet-stream" // else libcurl says form data
        }
        for (name, value) in allHeaders.sorted(by: { $0.key < $1.key }) {
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }

        _ = pl_curl_set_string(easy, CURLOPT_URL, request.url)
        _ = pl_curl_set_long(easy, CURLOPT_NOSIGNAL, 1) // no SIGALRM in a multithreaded process
        // A signature is for one URL: a signed request follows no redirect.
        _ = pl_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, request.signing == nil ? 1 : 0)
        _ = pl_curl_set_long(easy, CURLOPT_MAXREDIRS, settings.maxRedirects)
        _ = pl_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = pl_curl_set_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        _ = pl_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Int(settings.timeout * 1000))
        _ = pl_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(settings.connectTimeout * 1000))
        _ = pl_curl_set_string(easy, CURLOPT_USERAGENT, settings.userAgent)
        _ = pl_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // A declared Content-Length over the limit fails before the body is read.
        _ = pl_curl_set_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxBytes))
        _ = pl_curl_set_headers(easy, headerList)
        _ = pl_curl_set_write_callback(easy, curlWriteBody, context)
        _ = pl_curl_set_header_callback(easy, curlReadHeader, context)
        _ = pl_curl_set_progress_callback(easy, curlProgress, context)

        if let signing = request.signing {
            // libcurl computes the signature (Signature Version 4); the key and secret go in
            // separately, so a colon in either cannot split them wrongly.
            _ = pl_curl_set_string(easy, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):\(signing.service)")
            _ = pl_curl_set_string(easy, CURLOPT_USERNAME, signing.credentials.accessKeyID)
            _ = pl_curl_set_string(easy, CURLOPT_PASSWORD, signing.credentials.secretAccessKey)
            // Keys are sent as written (percent-encoded): "." and ".." in a key are not folders.
            _ = pl_curl_set_long(easy, CURLOPT_PATH_AS_IS, 1)
        }
        if request.method == "HEAD" {
            _ = pl_curl_set_long(easy, CURLOPT_NOBODY, 1)
        } else if request.method != "GET" || request.body != nil {
            _ = pl_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        let body = request.body ?? Data()
        let code = withExtendedLifetime(transfer) {
            body.withUnsafeBytes { bytes in
                // The body goes as "post fields" under the request's own method: libcurl 7.88's
                // signer hashes exactly these bytes, as `x-amz-content-sha256` says.
                if request.body != nil {
                    _ = pl_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                    if let base = bytes.baseAddress, bytes.count > 0 {
                        _ = pl_curl_set_pointer(easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: base))
                    } else {
                        _ = pl_curl_set_string(easy, CURLOPT_COPYPOSTFIELDS, "") // copied: no pointer to keep alive
                    }
                }
                return curl_easy_perform(easy)
            }
        }
        guard code == CURLE_OK else {
            throw Self.error(for: code, transfer: transfer, easy: easy, maxBytes: request.maxBytes)
        }
        return DataResponse(status: pl_curl_response_code(easy), body: transfer.body, headers: transfer.headers)
    }

    /// What libcurl 7.88's signer leaves to the caller: the payload's hash (which S3 requires and
    /// checks) and a session token, both signed with the other headers.
    static func addSigningHeaders(_ signing: AWSSigning, body: Data?, to headers: inout [String: String]) {
        if !headers.keys.contains(where: { $0.lowercased() == "x-amz-content-sha256" }) {
            headers["x-amz-content-sha256"] = body.map(SHA256.hex) ?? SHA256.empty
        }
        if let token = signing.credentials.sessionToken { headers["x-amz-security-token"] = token }
    }

    private static func error(for code: CURLcode, transfer: Transfer, easy: UnsafeMutableRawPointer, maxBytes: Int64) -> FetchError {
        let text = String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_WRITE_ERROR where transfer.exceededLimit, CURLE_FILESIZE_EXCEEDED:
            return FetchError(.tooLarge, "the response is larger than fetch.maxBytes (\(maxBytes) bytes); the download was stopped")
        case CURLE_ABORTED_BY_CALLBACK:
            return FetchError(.cancelled, "cancelled")
        case CURLE_UNSUPPORTED_PROTOCOL:
            let target = pl_curl_redirect_url(easy).map { String(cString: $0) }
            return FetchError(.badRedirect, "redirected to \(target ?? "a URL") whose scheme is not http or https; refused")
        case CURLE_TOO_MANY_REDIRECTS:
            return FetchError(.badRedirect, "too many redirects")
        case CURLE_OPERATION_TIMEDOUT:
            return FetchError(.timeout, "timed out: \(text)")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_SEND_ERROR,
             CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SSL_CONNECT_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return FetchError(.connection, text)
        case CURLE_URL_MALFORMAT:
            return FetchError(.invalidRequest, text)
        default:
            return FetchError(.other, text)
        }
    }
}

/// libcurl's global state, started once before the first handle.
enum CurlGlobal {
    static func start() { _ = started }
    private static let started: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// One pooled easy handle; cleaned up when the loader goes away.
private final class EasyHandle: @unchecked Sendable {
    // Used by one transfer at a time: a handle is either in the idle pool (behind its mutex)
    // or owned by the single `load` call that took it.
    let pointer: UnsafeMutableRawPointer?

    init() { pointer = curl_easy_init() }

    deinit { if let pointer { curl_easy_cleanup(pointer) } }
}

/// The state of one transfer, reached from libcurl's callbacks through their context pointer.
private final class Transfer {
    var body = Data()
    var headers: [String: String] = [:]
    var exceededLimit = false
    let maxBytes: Int64
    let isCancelled: @Sendable () -> Bool

    init(maxBytes: Int64, isCancelled: @escaping @Sendable () -> Bool) {
        self.maxBytes = maxBytes
        self.isCancelled = isCancelled
    }
}

/// Appends body bytes; returning less than given makes libcurl stop with CURLE_WRITE_ERROR,
/// which is how a body over the limit is cut off while streaming.
private let curlWriteBody: pl_curl_data_callback = { data, size, count, context in
    guard let context, let data else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    if Int64(transfer.body.count + length) > transfer.maxBytes {
        transfer.exceededLimit = true
        return 0
    }
    data.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.body.append($0, count: length) }
    return length
}

/// Records response headers. After a redirect a new status line starts a new header block,
/// so the headers kept are those of the final response.
private let curlReadHeader: pl_curl_data_callback = { data, size, count, context in
    guard let context, let data else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let line = data.withMemoryRebound(to: UInt8.self, capacity: length) {
        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }.trimmingCharacters(in: .whitespacesAndNewlines)
    if line.hasPrefix("HTTP/") {
        transfer.headers = [:]
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        transfer.headers[name] = value
    }
    return length
}

private let curlProgress: pl_curl_progress_callback = { context, _, _, _, _ in
    guard let context else { return 0 }
    return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().isCancelled() ? 1 : 0
}
