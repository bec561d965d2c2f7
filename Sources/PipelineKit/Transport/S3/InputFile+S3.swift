import Foundation

extension InputFile {
    /// An object in S3-compatible storage. `{name}` is the last part of the key; `{dir}` the
    /// folders of the key below the glob's literal folders (for a single object, the bucket and
    /// the key's folders, as for a URL's host and path).
    public init(s3 location: S3Location, subfolder: String? = nil, etag: String? = nil, byteCount: Int64? = nil) {
        let address = location.description
        let components = location.key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        self.init(
            remote: address, displayName: address, byteCount: byteCount,
            listedVersion: etag.map { FetchedSource.version(of: address, etag: $0) },
            fileName: components.last.flatMap { $0.isEmpty ? nil : $0 } ?? "index",
            subfolder: subfolder ?? ([location.bucket] + components.dropLast()).joined(separator: "/"))
    }

    /// The object, for an `s3://` input.
    public var s3Location: S3Location? { url.flatMap(S3Location.init) }
}
