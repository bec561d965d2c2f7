import Foundation

/// What S3 answered when an operation failed: its error code (`NoSuchKey`, `AccessDenied`,
/// `SignatureDoesNotMatch`, …) read from the XML body, with the bucket and key it was about.
public struct S3Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The S3 operation: `GetObject`, `HeadObject`, `PutObject`, `ListObjectsV2`.
    public let operation: String
    /// The bucket.
    public let bucket: String
    /// The key (for a listing, the prefix).
    public let key: String
    /// The HTTP status of S3's answer.
    public let status: Int
    /// S3's code; for a bodiless answer (`HEAD`), the code its status stands for.
    public let code: String
    /// S3's own explanation, when the answer had a body.
    public let message: String?

    /// The code, status and message; the bucket and key are named by the item's reason.
    public var description: String {
        "\(code) (HTTP \(status))" + (message.map { ": \($0)" } ?? "")
    }

    /// Reads S3's error body; a body without a code (a `HEAD`'s) is named from the status.
    /// What its message repeats of `credentials` (a server that echoes the request's headers) is hidden.
    init(operation: String, bucket: String, key: String, response: DataResponse, hiding credentials: AWSCredentials? = nil) {
        let body = Substring(String(decoding: response.body.prefix(64 * 1024), as: UTF8.self))
        let fallback =
            switch response.status {
            case 404: key.isEmpty ? "NoSuchBucket" : "NoSuchKey"
            case 403: "AccessDenied"
            case 400: "BadRequest"
            default: "HTTP\(response.status)"
            }
        self.operation = operation
        self.bucket = bucket
        self.key = key
        self.status = response.status
        let secrets = [credentials?.secretAccessKey, credentials?.sessionToken, credentials?.accessKeyID].compactMap { $0 }
        let hidden = { (text: String) in secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "…") } }
        self.code = S3XML.value(of: "Code", in: body) ?? fallback
        let message = S3XML.value(of: "Message", in: body).map(hidden)
        // A bucket of another region is answered 301 (PermanentRedirect), whose message names
        // neither the region nor what to change: S3 gives the region in a header.
        if response.status == 301 || code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed",
            let region = response.headers["x-amz-bucket-region"] ?? S3XML.value(of: "Region", in: body)
        {
            let hint = "the bucket \"\(bucket)\" is in the region \(region): set \"s3\": {\"region\": \"\(region)\"} or AWS_REGION"
            self.message = message.map { "\($0) (\(hint))" } ?? hint
        } else {
            self.message = message
        }
    }
}
