import CCurl

/// What the libcurl loaded at run time can do, read once from `curl_version_info`: the library
/// may be older, or built with fewer protocols, than the headers pipeline was compiled against,
/// and a missing feature must stop a request before it is sent rather than change it.
struct LibcurlSupport: Sendable, Equatable {
    /// The schemes pipeline fetches, as libcurl's protocol list names them.
    static let schemes = "http,https"

    /// libcurl's version as it reports it, for messages.
    let version: String
    /// The protocols it speaks, lower case (`http`, `https`, …).
    let protocols: Set<String>
    /// Whether it signs requests with AWS Signature Version 4 (`CURLOPT_AWS_SIGV4`).
    let signsAWSRequests: Bool
    /// Why libcurl cannot be used at all (its global start failed), or nil.
    let startProblem: String?

    /// The first libcurl with `CURLOPT_AWS_SIGV4`: 7.75.0.
    static let firstSigningVersion: UInt32 = 0x07_4B_00

    /// The libcurl of this process, started once (`curl_global_init`) before the first handle.
    static let current: LibcurlSupport = {
        let started = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        let startProblem = started == CURLE_OK ? nil : "curl_global_init failed: \(String(cString: curl_easy_strerror(started)))"
        guard let info = pl_curl_version_info()?.pointee else {
            return LibcurlSupport(
                version: "of unknown version", protocols: [], signsAWSRequests: false,
                startProblem: startProblem ?? "curl_version_info said nothing")
        }
        var protocols: Set<String> = []
        if var entry = info.protocols {
            // The list ends with a null entry; the bound only guards against a list without one.
            for _ in 0..<256 {
                guard let name = entry.pointee else { break }
                protocols.insert(String(cString: name).lowercased())
                entry += 1
            }
        }
        return LibcurlSupport(
            version: info.version.map { String(cString: $0) } ?? "of unknown version", protocols: protocols,
            signsAWSRequests: info.version_num >= firstSigningVersion, startProblem: startProblem)
    }()

    /// Why a request to `scheme` (signed with SigV4 when `signed`) cannot be made with this
    /// libcurl as asked, or nil when it can: a request is never sent other than as asked.
    func refusal(scheme: String, signed: Bool) -> FetchError? {
        if let startProblem {
            return FetchError(.other, "libcurl cannot be used (\(startProblem)); the request was not sent")
        }
        if !protocols.contains(scheme) {
            return FetchError(
                .invalidRequest,
                "this libcurl (\(version)) does not speak \(scheme), which the URL needs"
                    + " (it speaks \(protocols.sorted().joined(separator: ", "))); the request was not sent")
        }
        if signed, !signsAWSRequests {
            return FetchError(
                .invalidRequest,
                "this libcurl (\(version)) cannot sign S3 requests: CURLOPT_AWS_SIGV4 needs libcurl 7.75"
                    + " or later; the request was not sent unsigned")
        }
        return nil
    }
}
