/// An object (or a prefix) in S3-compatible storage, written `s3://bucket/key`.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    /// The bucket's name.
    public let bucket: String
    /// The key as written after the bucket, not percent-encoded; may be empty (the whole bucket).
    public let key: String

    /// The object `key` in `bucket`.
    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Reads `s3://bucket/key`; nil when the text is not an `s3://` address with a bucket.
    public init?(_ text: String) {
        guard Self.isS3(text) else { return nil }
        let rest = text.dropFirst(Self.scheme.count)
        let bucket = rest.prefix { $0 != "/" }
        guard !bucket.isEmpty else { return nil }
        self.bucket = String(bucket)
        self.key = String(rest.dropFirst(bucket.count + 1))
    }

    /// Whether `text` starts with `s3://` (in any case, as URL schemes are).
    public static func isS3(_ text: String) -> Bool {
        text.prefix(scheme.count).lowercased() == scheme
    }

    static let scheme = "s3://"

    /// The address, `s3://bucket/key`.
    public var description: String { "s3://\(bucket)/\(key)" }
}
