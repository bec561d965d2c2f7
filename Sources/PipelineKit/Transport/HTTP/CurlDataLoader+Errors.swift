import CCurl
import Foundation

/// What the fetch stage says of a transfer libcurl ended with an error: the kind, which decides
/// whether it is retried, and words a user can act on.
extension CurlDataLoader {
    /// The error of a transfer that ended with `code`. `errorText` is libcurl's own words for it
    /// ("" for none), `exceededLimit` whether its body passed `maxBytes`, and `timedOut` whether
    /// the progress callback stopped it at `fetch.timeout` (`timeout` seconds), which libcurl
    /// reports as any abort.
    static func error(
        for code: CURLcode, errorText: String, exceededLimit: Bool, timedOut: Bool, maxBytes: Int64, timeout: Double,
        authorities: CertificateAuthorities
    ) -> FetchError {
        let text = String(cString: curl_easy_strerror(code))
        // libcurl's own words for this transfer ("SSL certificate problem: self-signed
        // certificate"), where its code alone says too little to act on.
        let detail = errorText.isEmpty ? text : errorText
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS:
            // Not retried: the same certificate would be refused again.
            return FetchError(.other, "the server's certificate was refused (\(detail)); \(authorities.refusalAdvice)")
        case CURLE_SSL_CACERT_BADFILE:
            return FetchError(.other, "\(authorities.unreadable): \(detail)")
        case CURLE_WRITE_ERROR where exceededLimit, CURLE_FILESIZE_EXCEEDED:
            return FetchError(.tooLarge, "the response is larger than fetch.maxBytes (\(maxBytes) bytes); the download was stopped")
        case CURLE_ABORTED_BY_CALLBACK where timedOut:
            return FetchError(
                noServer: .timeout, "timed out: the transfer took longer than fetch.timeout (\(Units.text(seconds: timeout)))")
        case CURLE_ABORTED_BY_CALLBACK:
            return FetchError(.cancelled, "cancelled")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY:
            // Redirects are followed hop by hop, each scheme checked first: only the answer
            // itself is left (HTTP/0.9 or a version libcurl does not speak). A connection that
            // gave it is closed, so a retry starts afresh.
            return FetchError(.connection, "the server's answer is not HTTP libcurl can read (\(text))")
        case CURLE_OPERATION_TIMEDOUT:
            return FetchError(noServer: .timeout, "timed out: \(text)")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return FetchError(noServer: .connection, text)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SSL_CONNECT_ERROR, CURLE_HTTP2,
            CURLE_HTTP2_STREAM:
            return FetchError(.connection, text)
        case CURLE_URL_MALFORMAT:
            return FetchError(.invalidRequest, text)
        case CURLE_OUT_OF_MEMORY:
            // libcurl 7.88 says so of a header line past the 100 KB it takes, far more often
            // than of memory it could not get.
            return FetchError(.other, "libcurl could not take the answer: a header line larger than 100 KB does this (\(detail))")
        default:
            return FetchError(.other, text)
        }
    }
}
