import Foundation

/// One input of a run: a file found by a glob or named in the pipeline file, a URL, or an S3 object.
public struct InputFile: Sendable, Hashable {
    /// The file's absolute path; for a URL, the URL.
    public let path: String
    /// The http(s) URL or `s3://` address of a remote input, nil for a local file.
    public let url: String?
    /// How reports name the input: the path relative to the pipeline file's folder when it is
    /// inside it, else the absolute path.
    public let displayName: String
    /// The input's subfolder below the folder its glob started from ("" for none): `{dir}`.
    public let subfolder: String
    /// The file's size when it was found, or nil when it could not be read then.
    public let byteCount: Int64?
    /// What identifies the input's bytes before they are fetched: an S3 object's ETag from its
    /// listing (then a run whose outputs are all up to date fetches nothing), else nil.
    public let listedVersion: String?

    /// A local file found by planning (no URL, no listed version).
    public init(path: String, displayName: String, subfolder: String, byteCount: Int64? = nil) {
        self.path = path
        self.url = nil
        self.displayName = displayName
        self.subfolder = subfolder
        self.byteCount = byteCount
        self.listedVersion = nil
        self.fileName = (path as NSString).lastPathComponent
    }

    /// A remote input. `{name}` is the last component of the URL's path (decoded; "index" when
    /// the path is empty) and `{dir}` the host and the folders of the path, so that outputs can
    /// mirror a site; the path template refuses any of them that would leave the output folder.
    /// The display name is the URL with the credentials in it hidden by `redaction`.
    /// A port other than the scheme's default is part of the host folder as `host_port`
    /// (`127.0.0.1_8080`): two origins on one host are two sites, and `_` is safe in a folder
    /// name on every file system, where `:` is not (Windows, SMB shares, macOS Finder).
    public init(url: String, redaction: CredentialRedaction = CredentialRedaction()) {
        self.path = url
        self.url = url
        self.displayName = redaction.redact(url)
        self.byteCount = nil
        self.listedVersion = nil
        let parsed = URL(string: url)
        let components = (parsed?.path ?? "").split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        self.fileName = components.last ?? "index"
        self.subfolder = ([Self.hostFolder(parsed)] + components.dropLast()).joined(separator: "/")
    }

    /// The host, with `_` and the port when it is not the scheme's default.
    private static func hostFolder(_ url: URL?) -> String {
        guard let host = url?.host, !host.isEmpty else { return "unknown-host" }
        let defaultPort = url?.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url?.port, port != defaultPort else { return host }
        return "\(host)_\(port)"
    }

    /// An object in S3-compatible storage. `{name}` is the last part of the key; `{dir}` the
    /// folders of the key below the glob's literal folders (for a single object, the bucket and
    /// the key's folders, as for a URL's host and path).
    public init(s3 location: S3Location, subfolder: String? = nil, etag: String? = nil, byteCount: Int64? = nil) {
        let address = location.description
        self.path = address
        self.url = address
        self.displayName = address
        self.byteCount = byteCount
        self.listedVersion = etag.map { "etag:\(address) \($0)" }
        let components = location.key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        self.fileName = components.last.flatMap { $0.isEmpty ? nil : $0 } ?? "index"
        self.subfolder = subfolder ?? ([location.bucket] + components.dropLast()).joined(separator: "/")
    }

    /// Whether the input is fetched over HTTP(S) or from S3.
    public var isRemote: Bool { url != nil }

    /// The object, for an `s3://` input.
    public var s3Location: S3Location? { url.flatMap(S3Location.init) }

    /// The file name with its extension: `{name}`.
    public let fileName: String

    /// The file name without its last extension: `{stem}`.
    public var stem: String {
        let name: String = fileName
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The extension without the dot: `{ext}`.
    public var fileExtension: String {
        let name: String = fileName
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
