import Foundation

/// One input of a run: a file found by a glob or named in the pipeline file, or a URL.
public struct InputFile: Sendable, Hashable {
    /// The file's absolute path; for a URL, the URL.
    public let path: String
    /// The http(s) URL of a remote input, nil for a local file.
    public let url: String?
    /// How reports name the input: the path relative to the pipeline file's folder when it is
    /// inside it, else the absolute path.
    public let displayName: String
    /// The input's subfolder below the folder its glob started from ("" for none): `{dir}`.
    public let subfolder: String
    /// The file's size when it was found, or nil when it could not be read then.
    public let byteCount: Int64?

    public init(path: String, displayName: String, subfolder: String, byteCount: Int64? = nil) {
        self.path = path
        self.url = nil
        self.displayName = displayName
        self.subfolder = subfolder
        self.byteCount = byteCount
        self.fileName = (path as NSString).lastPathComponent
    }

    /// A remote input. `{name}` is the last component of the URL's path (decoded; "index" when
    /// the path is empty) and `{dir}` the host and the folders of the path, so that outputs can
    /// mirror a site; the path template refuses any of them that would leave the output folder.
    public init(url: String) {
        self.path = url
        self.url = url
        self.displayName = url
        self.byteCount = nil
        let parsed = URL(string: url)
        let components = (parsed?.path ?? "").split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        self.fileName = components.last ?? "index"
        self.subfolder = ([parsed?.host ?? "unknown-host"] + components.dropLast()).joined(separator: "/")
    }

    /// Whether the input is fetched over HTTP(S).
    public var isRemote: Bool { url != nil }

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
