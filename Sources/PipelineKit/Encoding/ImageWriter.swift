import Foundation

/// Writes encoded bytes so that the target path only ever holds a whole file: the bytes go to
/// a temporary file beside the target, are flushed to disk, and the temporary file is renamed
/// over the target in one step.
enum ImageWriter {
    /// Temporary files carry this marker, so a later run can recognise leftovers of a killed one.
    static let temporaryMarker = ".pipeline-tmp-"

    static func write(_ data: Data, to path: String, root: String) throws(ItemError) {
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
        var failure: String?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                guard let base = bytes.baseAddress else { return }
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "cannot write \(path): \(String(cString: strerror(errno)))"
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 {
            failure = "cannot flush \(path) to disk: \(String(cString: strerror(errno)))"
        }
        if close(descriptor) != 0, failure == nil {
            failure = "cannot write \(path): \(String(cString: strerror(errno)))"
        }
        if failure == nil, rename(temporary, path) != 0 {
            failure = "cannot move the finished file to \(path): \(String(cString: strerror(errno)))"
        }
        if let failure {
            unlink(temporary)
            throw ItemError(stage: .encode, reason: failure)
        }
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
