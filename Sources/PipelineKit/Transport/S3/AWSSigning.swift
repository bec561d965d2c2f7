/// Credentials for S3-compatible storage. Their description never shows the secret or the
/// session token, so they cannot reach an error, a log or a report by accident.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access key's id (`AKIA…`, `ASIA…` for temporary keys): not a secret.
    public let accessKeyID: String
    /// The secret: handed to libcurl to sign with, and shown nowhere.
    public let secretAccessKey: String
    /// The token of temporary (session) credentials, sent as `x-amz-security-token`.
    public let sessionToken: String?

    /// Credentials of a key, with its session token for temporary ones.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The key's id, and whether it is a session's: never the secret or the token.
    public var description: String {
        "access key \(accessKeyID)" + (sessionToken == nil ? "" : " (session credentials)")
    }

    /// The same as `description`: `debugPrint` and string interpolation in tests show no secret either.
    public var debugDescription: String { description }
}

/// How to sign a request with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`).
public struct AWSSigning: Sendable, Equatable, CustomStringConvertible {
    /// The credentials to sign with.
    public let credentials: AWSCredentials
    /// The region in the credential scope, for example `us-east-1`.
    public let region: String
    /// The service in the credential scope: `s3` (or `iam`, `sts`).
    public let service: String

    /// Signing with `credentials` for `service` in `region`.
    public init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// Names the service, region and key id; never the secret or the token.
    public var description: String { "SigV4 \(service) in \(region) with \(credentials)" }
}
