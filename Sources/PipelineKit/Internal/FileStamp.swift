import Foundation

/// One version of a local file as `stat` gives it, without reading it: which file (its device
/// and inode), its size and its modification time. Writing the file changes the time; replacing
/// it, the inode. The fetch stage takes an input's for its version (`version`), which the
/// decoder holds the file to while reading it; the journal compares an output's with the one it
/// recorded (`OutputJournal.Verdict`).
package struct FileStamp: Sendable, Equatable {
    /// The file's size in bytes.
    package let size: Int64
    let seconds: Int
    let nanoseconds: Int
    let file: FileIdentity

    /// The stamp of the regular file at `path`, or nil when there is none there.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The stamp of the regular file open at `descriptor`, or nil when it is not one.
    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The stamp `info` gives, when it is a regular file's.
    init?(_ info: stat) {
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        self.init(anyKind: info)
    }

    /// The stamp `info` gives, of a file of any kind (a tile pyramid's folder too).
    init(anyKind info: stat) {
        size = Int64(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        file = FileIdentity(info)
    }

    /// The input's version as the journal's fingerprints take it: what makes its outputs made
    /// again when it changes.
    var version: String { "file:\(size):\(seconds).\(nanoseconds):\(file.inode)" }

    /// Whether `other` has the same `version`, compared without spelling it.
    func hasVersion(of other: FileStamp) -> Bool {
        size == other.size && seconds == other.seconds && nanoseconds == other.nanoseconds && file.inode == other.file.inode
    }
}
