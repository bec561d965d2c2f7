import CCurl
import Foundation
import Vips

/// The default `DataLoading`: libcurl, following redirects to http and https only, with
/// connections kept alive between transfers (HTTP/2 where the server offers it).
///
/// Redirects are followed here, one transfer a hop, rather than by libcurl: libcurl sends the
/// extra headers to every host it follows to, and they are for the input URL's origin alone
/// unless `Settings.headersOnRedirect` says otherwise (see `+Redirects`), and never for a request
/// that is not an input's (`DataRequest.sendsFileHeaders`).
///
/// Easy handles are pooled: each keeps its own connection cache, so a handle taken again for
/// the same host reuses the open connection.
public final class CurlDataLoader: DataLoading {
    /// Settings every transfer shares.
    public struct Settings: Sendable {
        /// Seconds one transfer may take.
        public var timeout: Double
        /// Seconds connecting may take.
        public var connectTimeout: Double
        /// Redirects followed (to http and https only).
        public var maxRedirects: Int
        /// The User-Agent header.
        public var userAgent: String
        /// Headers sent with unsigned requests that take them (`DataRequest.sendsFileHeaders`) to
        /// the URL's own origin (scheme, host and port).
        public var headers: [String: String]
        /// Whether `headers` go also to the other origins redirects lead to.
        public var headersOnRedirect: Bool
        /// What https servers' certificates are checked against.
        public var certificateAuthorities: CertificateAuthorities

        /// Settings with the pipeline file's defaults for what is not given, and the certificate
        /// authorities the environment names (`CertificateAuthorities.fromEnvironment()`).
        public init(
            timeout: Double = StageDefaults.fetchTimeout, connectTimeout: Double = StageDefaults.connectTimeout,
            maxRedirects: Int = StageDefaults.maxRedirects, userAgent: String = StageDefaults.userAgent,
            headers: [String: String] = [:], headersOnRedirect: Bool = false,
            certificateAuthorities: CertificateAuthorities = .fromEnvironment()
        ) {
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.maxRedirects = maxRedirects
            self.userAgent = userAgent
            self.headers = headers
            self.headersOnRedirect = headersOnRedirect
            self.certificateAuthorities = certificateAuthorities
        }
    }

    private let settings: Settings
    /// What the libcurl loaded at run time can do, read once, so that a request it cannot make
    /// as asked fails before anything is sent.
    let support: LibcurlSupport
    private let idleHandles = Locked<[EasyHandle]>([])

    /// The clock `Settings.timeout` is kept on: time the process spends stopped (SIGSTOP, Ctrl-Z,
    /// `docker pause`) is no time a server took to answer.
    static let clock = VipsDeadline.Clock.running
    /// How much longer than `Settings.timeout` libcurl's own clock, which counts stops, lets a
    /// transfer go: the bound of a stopped process's transfer should the progress callback not
    /// be asked in time.
    static let stoppedAllowance: Double = 3600

    /// A loader sharing `settings` between its transfers.
    public convenience init(settings: Settings = Settings()) {
        self.init(settings: settings, support: .current)
    }

    /// A loader that believes libcurl can do what `support` says: lets tests take features away.
    init(settings: Settings, support: LibcurlSupport) {
        self.settings = settings
        self.support = support
    }

    /// libcurl configured from a pipeline file's `fetch` section, trusting the certificate
    /// authorities the environment names (`CertificateAuthorities.fromEnvironment()`) unless
    /// `certificateAuthorities` are given.
    public convenience init(fetch: FetchSettings, certificateAuthorities: CertificateAuthorities = .fromEnvironment()) {
        self.init(
            settings: Settings(
                timeout: fetch.timeout, connectTimeout: fetch.connectTimeout, maxRedirects: fetch.maxRedirects,
                userAgent: fetch.userAgent, headers: fetch.headers, headersOnRedirect: fetch.headersOnRedirect,
                certificateAuthorities: certificateAuthorities))
    }

    /// Makes one attempt at `request` on a pooled handle; every option is checked as it is set,
    /// and a request this libcurl cannot make as asked fails before anything is sent.
    public func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse {
        guard let scheme = URL(string: request.url)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw FetchError(.invalidRequest, "only http and https URLs can be fetched")
        }
        if let refusal = support.refusal(scheme: scheme, signed: request.signing != nil) { throw refusal }
        let handle = idleHandles.withLock { $0.popLast() } ?? EasyHandle()
        guard let easy = handle.pointer else { throw FetchError(.other, "libcurl could not create a transfer") }
        defer {
            curl_easy_reset(easy)
            idleHandles.withLock { $0.append(handle) }
        }
        // The whole transfer's time, on the clock that leaves out time the process was stopped.
        let deadline = Self.clock.now() + settings.timeout
        // A signed request follows no redirect: its signature is for one URL.
        guard request.signing == nil else {
            return try transfer(request, on: easy, fileHeaders: false, deadline: deadline, isCancelled: isCancelled)
        }
        var hop = request
        // Bounded by maxRedirects: each pass follows one redirect or returns.
        for followed in 0...settings.maxRedirects {
            if followed > 0 {
                curl_easy_reset(easy)
                if isCancelled() { throw FetchError(.cancelled, "cancelled") }
            }
            let response: DataResponse
            do {
                response = try transfer(
                    hop, on: easy,
                    fileHeaders: request.sendsFileHeaders && (settings.headersOnRedirect || Self.sameOrigin(hop.url, request.url)),
                    deadline: deadline, isCancelled: isCancelled)
            } catch  where followed > 0 && error.kind != .cancelled {
                // Of the redirect's target, not of the server asked, which answered: said so, and
                // not taken for that server's (`foundNoServer` stays false).
                throw FetchError(error.kind, "redirected to \(CredentialRedaction().redact(hop.url)): \(error.message)")
            }
            guard let next = try Self.redirect(after: response, of: hop, target: pl_curl_redirect_url(easy).map { String(cString: $0) })
            else { return response }
            guard followed < settings.maxRedirects else { throw tooManyRedirects }
            hop = next
        }
        throw tooManyRedirects
    }

    private var tooManyRedirects: FetchError {
        FetchError(.badRedirect, "too many redirects: more than fetch.maxRedirects (\(settings.maxRedirects)) allows")
    }

    /// Makes one HTTP transfer of `request`, following no redirect, with the file's headers when
    /// `fileHeaders`, ending by `deadline` (on `clock`).
    private func transfer(
        _ request: DataRequest, on easy: UnsafeMutableRawPointer, fileHeaders: Bool, deadline: Double,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(FetchError) -> DataResponse {
        let transfer = Transfer(maxBytes: request.maxBytes, deadline: deadline, isCancelled: isCancelled)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        // The file's extra headers are for HTTP inputs; a signed request carries only its own.
        var allHeaders =
            request.signing == nil && fileHeaders
            ? settings.headers.merging(request.headers) { _, perRequest in perRequest } : request.headers
        if let signing = request.signing { Self.addSigningHeaders(signing, body: request.body, to: &allHeaders) }
        if request.body != nil, !allHeaders.keys.contains(where: { $0.lowercased() == "content-type" }) {
            allHeaders["Content-Type"] = "application/octet-stream"  // else libcurl says form data
        }
        for (name, value) in allHeaders.sorted(by: { $0.key < $1.key }) {
            // libcurl returns nil only when out of memory, and then the list it was given still stands.
            guard let appended = curl_slist_append(headerList, "\(name): \(value)") else {
                throw FetchError(.other, "libcurl could not add the request header \(name)")
            }
            headerList = appended
        }

        // The buffer goes with `transfer`: the handle must not keep pointing at it.
        defer { _ = pl_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, nil) }
        try setOptions(
            easy, request: request, headers: headerList, context: context, errorBuffer: transfer.errorBuffer,
            timeout: deadline - Self.clock.now())
        let body = request.body ?? Data()
        let outcome: Result<CURLcode, FetchError> = withExtendedLifetime(transfer) {
            body.withUnsafeBytes { bytes in
                do throws(FetchError) {
                    // The body goes as "post fields" under the request's own method: libcurl 7.88's
                    // signer hashes exactly these bytes, as `x-amz-content-sha256` says.
                    if request.body != nil {
                        let option = CurlOption(easy, version: support.version)
                        try option.check(
                            pl_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
                        if let base = bytes.baseAddress, bytes.count > 0 {
                            try option.check(
                                pl_curl_set_pointer(easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: base)), "CURLOPT_POSTFIELDS"
                            )
                        } else {
                            // Copied: no pointer to keep alive.
                            try option.check(pl_curl_set_string(easy, CURLOPT_COPYPOSTFIELDS, ""), "CURLOPT_COPYPOSTFIELDS")
                        }
                    }
                    return .success(curl_easy_perform(easy))
                } catch {
                    return .failure(error)
                }
            }
        }
        let code = try outcome.get()
        guard code == CURLE_OK else {
            throw Self.error(
                for: code, errorText: transfer.errorText, exceededLimit: transfer.exceededLimit, timedOut: transfer.timedOut,
                maxBytes: request.maxBytes, timeout: settings.timeout, authorities: settings.certificateAuthorities)
        }
        var status = 0
        try CurlOption(easy, version: support.version).check(pl_curl_response_code(easy, &status), "CURLINFO_RESPONSE_CODE")
        return DataResponse(status: status, body: transfer.body, headers: transfer.headers)
    }

    /// Sets every option of one transfer but its body, each checked: a libcurl that refuses one
    /// would otherwise make a different request from the one asked for (an S3 request unsigned,
    /// redirects to any scheme followed).
    private func setOptions(
        _ easy: UnsafeMutableRawPointer, request: DataRequest, headers: UnsafeMutablePointer<curl_slist>?,
        context: UnsafeMutableRawPointer, errorBuffer: UnsafeMutablePointer<CChar>, timeout: Double
    ) throws(FetchError) {
        let option = CurlOption(easy, version: support.version)
        try option.check(pl_curl_set_string(easy, CURLOPT_URL, request.url), "CURLOPT_URL")
        // No SIGALRM in a multithreaded process.
        try option.check(pl_curl_set_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        // Redirects are followed by `load`, hop by hop, or not at all (a signed request).
        try option.check(pl_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        try option.check(pl_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, LibcurlSupport.schemes), "CURLOPT_PROTOCOLS_STR")
        try option.check(pl_curl_set_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, LibcurlSupport.schemes), "CURLOPT_REDIR_PROTOCOLS_STR")
        // A body sent with Content-Encoding (an object stored gzipped, as buckets and CDNs keep
        // some) is decoded as it arrives; fetch.maxBytes counts the bytes decoded.
        try option.check(pl_curl_set_string(easy, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")
        // The transfer's time is kept by the progress callback, on the clock that leaves out time
        // the process was stopped; libcurl's own clock, which counts it, only bounds a transfer
        // the callback is not asked about, stops and all (`stoppedAllowance`). At least 1 ms,
        // since 0 means none.
        try option.check(
            pl_curl_set_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int((timeout + Self.stoppedAllowance) * 1000))), "CURLOPT_TIMEOUT_MS")
        try option.check(
            pl_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(settings.connectTimeout * 1000))), "CURLOPT_CONNECTTIMEOUT_MS")
        try option.check(pl_curl_set_string(easy, CURLOPT_USERAGENT, settings.userAgent), "CURLOPT_USERAGENT")
        try option.check(pl_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "CURLOPT_HTTP_VERSION")
        // A declared Content-Length over the limit fails before the body is read.
        try option.check(pl_curl_set_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        try option.check(pl_curl_set_headers(easy, headers), "CURLOPT_HTTPHEADER")
        try option.check(pl_curl_set_write_callback(easy, curlWriteBody, context), "CURLOPT_WRITEFUNCTION")
        try option.check(pl_curl_set_header_callback(easy, curlReadHeader, context), "CURLOPT_HEADERFUNCTION")
        try option.check(pl_curl_set_progress_callback(easy, curlProgress, context), "CURLOPT_XFERINFOFUNCTION")
        try option.check(pl_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        if let file = settings.certificateAuthorities.file {
            try option.check(pl_curl_set_string(easy, CURLOPT_CAINFO, file), "CURLOPT_CAINFO")
        }
        if let folder = settings.certificateAuthorities.folder {
            try option.check(pl_curl_set_string(easy, CURLOPT_CAPATH, folder), "CURLOPT_CAPATH")
        }
        if let signing = request.signing {
            // libcurl computes the signature (Signature Version 4); the key and secret go in
            // separately, so a colon in either cannot split them wrongly.
            try option.check(
                pl_curl_set_string(easy, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):\(signing.service)"), "CURLOPT_AWS_SIGV4")
            try option.check(pl_curl_set_string(easy, CURLOPT_USERNAME, signing.credentials.accessKeyID), "CURLOPT_USERNAME")
            try option.check(pl_curl_set_string(easy, CURLOPT_PASSWORD, signing.credentials.secretAccessKey), "CURLOPT_PASSWORD")
            // Keys are sent as written (percent-encoded): "." and ".." in a key are not folders.
            try option.check(pl_curl_set_long(easy, CURLOPT_PATH_AS_IS, 1), "CURLOPT_PATH_AS_IS")
        }
        if request.method == "HEAD" {
            try option.check(pl_curl_set_long(easy, CURLOPT_NOBODY, 1), "CURLOPT_NOBODY")
        } else if request.method != "GET" || request.body != nil {
            try option.check(pl_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, request.method), "CURLOPT_CUSTOMREQUEST")
        }
    }

    /// What libcurl 7.88's signer leaves to the caller: the payload's hash (which S3 requires and
    /// checks) and a session token, both signed with the other headers.
    static func addSigningHeaders(_ signing: AWSSigning, body: Data?, to headers: inout [String: String]) {
        if !headers.keys.contains(where: { $0.lowercased() == "x-amz-content-sha256" }) {
            headers["x-amz-content-sha256"] = body.map(SHA256.hex) ?? SHA256.empty
        }
        if let token = signing.credentials.sessionToken { headers["x-amz-security-token"] = token }
    }
}

/// One transfer's options as they are set: a code other than CURLE_OK becomes an error naming
/// the option libcurl refused, before anything is sent.
struct CurlOption {
    private let easy: UnsafeMutableRawPointer
    private let version: String

    init(_ easy: UnsafeMutableRawPointer, version: String) {
        self.easy = easy
        self.version = version
    }

    func check(_ code: CURLcode, _ name: String) throws(FetchError) {
        guard code != CURLE_OK else { return }
        let reason = String(cString: curl_easy_strerror(code))
        throw FetchError(.invalidRequest, "libcurl \(version) refused \(name) (\(reason)); the request was not sent")
    }
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
    /// Whether the progress callback stopped the transfer at `deadline`.
    var timedOut = false
    let maxBytes: Int64
    /// When the transfer must end, on `CurlDataLoader.clock`.
    let deadline: Double
    let isCancelled: @Sendable () -> Bool
    /// Where libcurl writes its own words for a failure (CURLOPT_ERRORBUFFER).
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init(maxBytes: Int64, deadline: Double, isCancelled: @escaping @Sendable () -> Bool) {
        self.maxBytes = maxBytes
        self.deadline = deadline
        self.isCancelled = isCancelled
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit { errorBuffer.deallocate() }

    /// libcurl's words for the failure, or "" when it wrote none.
    var errorText: String { String(cString: errorBuffer) }
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

/// Stops the transfer (returning non-zero) when it is cancelled or its time is up; libcurl asks
/// about once a second even while nothing arrives.
private let curlProgress: pl_curl_progress_callback = { context, _, _, _, _ in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if transfer.isCancelled() { return 1 }
    guard CurlDataLoader.clock.now() >= transfer.deadline else { return 0 }
    transfer.timedOut = true
    return 1
}
