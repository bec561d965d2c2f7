import Foundation

/// One input of a run: a file found by a glob or named in the pipeline file.
public struct InputFile: Sendable, Hashable {
    /// The file's absolute path.
    public let path: String
    /// How reports name the input: the path relative to the pipeline file's folder when it is
    /// inside it, else the absolute path.
    public let displayName: String
    /// The input's subfolder below the folder its glob started from ("" for none): `{dir}`.
    public let subfolder: String
    /// The file's size when it was found, or nil when it could not be read then.
    public let byteCount: Int64?

    public init(path: String, displayName: String, subfolder: String, byteCount: Int64? = nil) {
        self.path = path
        self.displayName = displayName
        self.subfolder = subfolder
        self.byteCount = byteCount
    }

    /// The file name with its extension: `{name}`.
    public var fileName: String { (path as NSString).lastPathComponent }

    /// The file name without its last extension: `{stem}`.
    public var stem: String {
        let name = fileName
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The extension without the dot: `{ext}`.
    public var fileExtension: String {
        let name = fileName
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
