import Foundation

extension ManifestWriter {
    /// Runs `body` holding an exclusive `flock` on `folder`, the manifest's: servers of one
    /// pipeline file sharing a folder (replicas on one volume) each read the manifest, add their
    /// entries and write it, and without the lock one would write over another's entries. The
    /// folder, not the file, since the manifest is replaced by a rename, which a lock on the
    /// file would not outlive.
    ///
    /// Where the folder cannot be opened or locked (a file system without locks), `body` runs
    /// unlocked, as writes always did: what it writes says why it could not, if anything.
    static func holdingLock(on folder: String, _ body: () throws(ReportWriterError) -> Void) throws(ReportWriterError) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        var locked = flock(descriptor, LOCK_EX) == 0
        while !locked, errno == EINTR { locked = flock(descriptor, LOCK_EX) == 0 }
        defer { if locked { flock(descriptor, LOCK_UN) } }
        try body()
    }
}
