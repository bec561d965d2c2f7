import Foundation

/// A local file's version as `stat` gives it: its size, modification time and inode, what a
/// run's fetch stage takes for an input's version. A file replaced by a rename, or written
/// again, has another.
package struct FileStamp: Sendable, Equatable {
    /// The file's size in bytes.
    package let size: Int64
    let seconds: Int
    let nanoseconds: Int
    let inode: UInt64

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

    private init?(_ info: stat) {
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        size = Int64(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        inode = UInt64(info.st_ino)
    }
}
