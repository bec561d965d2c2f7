import Foundation

extension CacheSettings {
    /// Why nothing can be written in the cache folder now (`Read-only file system`, `No space
    /// left on device`, `Permission denied`), or nil when a file can be written there. Creates the
    /// folder when missing, then writes and removes one byte in a new file: a full file system
    /// may still let a file be created, but not grow.
    func writeProblem() -> String? {
        let folder = directory.path
        if let reason = Self.makeFolder(folder) { return reason }
        let probe = folder + "/.pipeline-probe-\(getpid())-" + UUID().uuidString.prefix(8)
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer {
            close(descriptor)
            unlink(probe)
        }
        var byte: UInt8 = 0
        guard write(descriptor, &byte, 1) == 1 else { return String(cString: strerror(errno)) }
        return nil
    }

    /// Creates `folder` and its missing parents; the system's reason when that fails.
    static func makeFolder(_ folder: String) -> String? {
        var info = stat()
        if stat(folder, &info) == 0 {
            return info.st_mode & S_IFMT == S_IFDIR ? nil : String(cString: strerror(ENOTDIR))
        }
        let parent = (folder as NSString).deletingLastPathComponent
        if parent != folder, !parent.isEmpty, let reason = makeFolder(parent) { return reason }
        guard mkdir(folder, 0o777) == 0 || errno == EEXIST else { return String(cString: strerror(errno)) }
        return nil
    }
}
