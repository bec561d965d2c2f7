import Foundation

/// Writes a file so that the target path only ever holds a whole file: the content goes to a
/// temporary file beside the target, is flushed to disk, and the temporary file is renamed over
/// the target in one step. On any failure the temporary file is removed.
enum ImageWriter {
    /// Temporary files carry this marker, so a later run can recognise leftovers of a killed one.
    static let temporaryMarker = ".pipeline-tmp-"

    /// Creates `path` through `fill`, which writes the content into the descriptor it is given.
    /// - Returns: the size of the finished file in bytes.
    static func write(to path: String, root: String, fill: (Int32) throws(ItemError) -> Void) throws(ItemError) -> Int {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw ItemError(stage: .encode, reason: "cannot create the folder \(folder): \(reasonText(error))")
        }
        try checkInsideRoot(folder: folder, root: root)

        let name = (path as NSString).lastPathComponent
        let temporary = folder + "/." + name + temporaryMarker + UUID().uuidString.prefix(8)
        // 0666 masked by the umask: a finished output is readable as any new file is (0644
        // under umask 022), not private like mkstemp's 0600.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw ItemError(stage: .encode, reason: "cannot write in \(folder): \(String(cString: strerror(errno)))")
        }
        var finished = false
        defer { if !finished { unlink(temporary) } }

        var size = 0
        do throws(ItemError) {
            try fill(descriptor)
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw systemError("cannot write \(path)") }
            size = Int(info.st_size)
            // Flushed before the rename, so even a power cut leaves the old file or the whole new one.
            guard fsync(descriptor) == 0 else { throw systemError("cannot flush \(path) to disk") }
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw systemError("cannot write \(path)") }
        guard rename(temporary, path) == 0 else { throw systemError("cannot move the finished file to \(path)") }
        finished = true
        return size
    }

    private static func systemError(_ what: String) -> ItemError {
        ItemError(stage: .encode, reason: "\(what): \(String(cString: strerror(errno)))")
    }

    /// A symbolic link inside the output folder must not lead the write outside it.
    private static func checkInsideRoot(folder: String, root: String) throws(ItemError) {
        guard let realFolder = realPath(folder), let realRoot = realPath(root) else {
            throw ItemError(stage: .encode, reason: "cannot resolve the output folder \(folder)")
        }
        guard realFolder == realRoot || realFolder.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            throw ItemError(stage: .encode, reason: "the output folder \(folder) leads outside \(root) (through a symbolic link)")
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func reasonText(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return nsError.localizedDescription
    }
}
