import Foundation

/// One input of a run: a file found by a glob or named in the pipeline file, a URL, or an object
/// in a store (`InputSources` says which source reads it).
public struct InputFile: Sendable, Hashable {
    /// The file's absolute path; for a URL, the URL.
    public let path: String
    /// How reports name the input: the path relative to the pipeline file's folder when it is
    /// inside it, else the absolute path (sharing the path's storage then).
    public let displayName: String
    /// The file's size when it was found, or nil when it could not be read then.
    public let byteCount: Int64?
    /// Where in `path` (in bytes) a local file's `{dir}` starts: it and `{name}` are parts of
    /// its path, made when asked for, since a plan keeps an input for every listing.
    private let subfolderStart: UInt32
    /// The names that are not parts of the path: a remote input's, or a local file's named
    /// otherwise by whoever made it.
    private let written: WrittenNames?

    private final class WrittenNames: Sendable {
        let url: String?
        let subfolder: String
        let fileName: String
        let listedVersion: String?

        init(url: String?, subfolder: String, fileName: String, listedVersion: String?) {
            self.url = url
            self.subfolder = subfolder
            self.fileName = fileName
            self.listedVersion = listedVersion
        }
    }

    /// The http(s) URL or `s3://` address of a remote input, nil for a local file.
    public var url: String? { written?.url }
    /// The input's subfolder below the folder its glob started from ("" for none): `{dir}`.
    public var subfolder: String {
        written?.subfolder ?? Self.bytes(of: path, from: Int(subfolderStart), to: Self.nameStart(of: path) - 1)
    }
    /// What identifies the input's bytes before they are fetched: an S3 object's ETag from its
    /// listing (then a run whose outputs are all up to date fetches nothing), else nil.
    public var listedVersion: String? { written?.listedVersion }
    /// The file name with its extension: `{name}`.
    public var fileName: String {
        written?.fileName ?? Self.bytes(of: path, from: Self.nameStart(of: path), to: path.utf8.count)
    }

    /// A local file found by planning (no URL, no listed version).
    public init(path: String, displayName: String, subfolder: String, byteCount: Int64? = nil) {
        self.path = path
        self.displayName = displayName.utf8.elementsEqual(path.utf8) ? path : displayName
        self.byteCount = byteCount
        let nameStart = Self.nameStart(of: path)
        let folder = subfolder.isEmpty ? nameStart : nameStart - 1 - subfolder.utf8.count
        let fileName = (path as NSString).lastPathComponent
        // Names that are the path's own bytes, starting a component, are kept as where they start.
        if path.utf8.count <= UInt32.max, folder >= 0,
            folder == 0 || Self.byte(of: path, at: folder - 1) == UInt8(ascii: "/"),
            subfolder.isEmpty || path.utf8.dropFirst(folder).prefix(subfolder.utf8.count).elementsEqual(subfolder.utf8),
            path.utf8.dropFirst(nameStart).elementsEqual(fileName.utf8)
        {
            subfolderStart = UInt32(folder)
            written = nil
        } else {
            subfolderStart = 0
            written = WrittenNames(url: nil, subfolder: subfolder, fileName: fileName, listedVersion: nil)
        }
    }

    /// A remote input. `{name}` is the last component of the URL's path (decoded; "index" when
    /// the path is empty) and `{dir}` the host and the folders of the path, so that outputs can
    /// mirror a site; the path template refuses any of them that would leave the output folder.
    /// The display name is the URL with the credentials in it hidden by `redaction`, and the
    /// names leave out the `;` parameters of the path's segments (`;jsessionid=…`), which are
    /// no part of a file's name and may be secrets.
    /// A port other than the scheme's default is part of the host folder as `host_port`
    /// (`127.0.0.1_8080`): two origins on one host are two sites, and `_` is safe in a folder
    /// name on every file system, where `:` is not (Windows, SMB shares, macOS Finder); an IPv6
    /// address writes its `:` as `-` for the same reason.
    public init(url: String, redaction: CredentialRedaction = CredentialRedaction()) {
        let parsed = URL(string: url)
        let components = CredentialRedaction.pathWithoutParameters(of: parsed).split(separator: "/", omittingEmptySubsequences: true).map(
            String.init)
        self.init(
            remote: url, displayName: redaction.redact(url), byteCount: nil, listedVersion: nil,
            fileName: components.last ?? "index",
            subfolder: ([Self.hostFolder(parsed)] + components.dropLast()).joined(separator: "/"))
    }

    /// A remote input with its names given: a URL's or an object's, as their sources name them.
    init(remote: String, displayName: String, byteCount: Int64?, listedVersion: String?, fileName: String, subfolder: String) {
        path = remote
        self.displayName = displayName.utf8.elementsEqual(remote.utf8) ? remote : displayName
        self.byteCount = byteCount
        subfolderStart = 0
        written = WrittenNames(
            url: remote, subfolder: subfolder, fileName: fileName, listedVersion: listedVersion)
    }

    /// The host in lower case (as it names the server in any case), with `_` and the port when it
    /// is not the scheme's default. An IPv6 address has its `:` (and the `%` before a zone)
    /// written as `-`, as a folder name may hold neither everywhere: `[::1]:8080` is `--1_8080`.
    private static func hostFolder(_ url: URL?) -> String {
        guard let written = url?.host?.lowercased(), !written.isEmpty else { return "unknown-host" }
        let host =
            written.contains(":") ? written.replacingOccurrences(of: ":", with: "-").replacingOccurrences(of: "%", with: "-") : written
        let defaultPort = url?.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url?.port, port != defaultPort else { return host }
        return "\(host)_\(port)"
    }

    /// The input as bytes, for a plan that keeps its inputs on disk (`RunPlan.SourceList`).
    func record() -> [UInt8] {
        var writer = RecordWriter()
        writer.append(path)
        // Most display names are the path itself, or its end: kept once.
        writer.append(displayName.utf8.elementsEqual(path.utf8) ? nil : displayName)
        writer.append(byteCount ?? -1)
        writer.append(subfolderStart)
        writer.append(UInt32(written == nil ? 0 : 1))
        if let written {
            writer.append(written.url)
            writer.append(written.subfolder)
            writer.append(written.fileName)
            writer.append(written.listedVersion)
        }
        return writer.bytes
    }

    /// The input whose `record()` `bytes` are, or nil when they are not one.
    init?(record bytes: [UInt8]) {
        var reader = RecordReader(bytes)
        guard let path = reader.string(), let displayName = reader.optionalString(), let byteCount = reader.int64(),
            let subfolderStart = reader.uint32(), let hasWrittenNames = reader.uint32()
        else { return nil }
        self.path = path
        self.displayName = displayName ?? path
        self.byteCount = byteCount < 0 ? nil : byteCount
        self.subfolderStart = subfolderStart
        if hasWrittenNames == 1 {
            guard let url = reader.optionalString(), let subfolder = reader.string(), let fileName = reader.string(),
                let listedVersion = reader.optionalString()
            else { return nil }
            written = WrittenNames(url: url, subfolder: subfolder, fileName: fileName, listedVersion: listedVersion)
        } else {
            written = nil
        }
        guard reader.isAtEnd else { return nil }
    }

    /// Inputs are the same when every name and version they have is. Paths are compared byte
    /// for byte, as the file system compares them: `String` takes a name spelled composed and
    /// decomposed (`café`) as one, and those are two files.
    public static func == (left: InputFile, right: InputFile) -> Bool {
        left.path.utf8.elementsEqual(right.path.utf8) && left.byteCount == right.byteCount && left.url == right.url
            && left.displayName == right.displayName && left.subfolder == right.subfolder && left.fileName == right.fileName
            && left.listedVersion == right.listedVersion
    }

    /// Hashes what tells most inputs apart: the path, size and URL.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(byteCount)
        hasher.combine(url)
    }

    /// Where the last component of `path` starts, in bytes.
    private static func nameStart(of path: String) -> Int {
        var start = path.utf8.count
        for byte in path.utf8.reversed() {
            if byte == UInt8(ascii: "/") { break }
            start -= 1
        }
        return start
    }

    private static func byte(of path: String, at offset: Int) -> UInt8 {
        path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: offset)]
    }

    /// The bytes of `path` from `start` to `end` (offsets at component boundaries), or "" when
    /// there are none.
    private static func bytes(of path: String, from start: Int, to end: Int) -> String {
        guard start < end else { return "" }
        let utf8 = path.utf8
        let from = utf8.index(utf8.startIndex, offsetBy: start)
        return String(decoding: utf8[from..<utf8.index(from, offsetBy: end - start)], as: UTF8.self)
    }

    /// Whether the input is fetched over HTTP(S) or from S3.
    public var isRemote: Bool { url != nil }

    /// The object, for an input in an object store (`s3://`).
    var objectLocation: ObjectLocation? { url.flatMap(ObjectLocation.init) }

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
