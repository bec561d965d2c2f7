import Foundation
import Vips

extension ImageDecoder {
    /// Holds a local file to one version while `body` reads it: opened without blocking (a FIFO,
    /// device or socket put in its place is refused, never waited on), checked against the
    /// version the fetch stage saw, read by every reader through its open descriptor (so a
    /// file renamed over it is not read), and checked again once read, since a file written in
    /// place changes under the descriptor too. A file that changed fails the item, whatever
    /// `body` made of it: the next run makes it from the new version. What libjxl prints while
    /// a JPEG XL is read is kept off stderr (`LibjxlOutput`).
    func pinned<Result>(_ source: EncodedSource, _ body: (EncodedSource) throws(ItemError) -> Result) throws(ItemError) -> Result {
        guard case .file(let path, let byteCount, let version, _) = source else {
            return try LibjxlOutput.capturing(source) { () throws(ItemError) in try body(source) }
        }
        let file: RegularFile
        do throws(RegularFile.Failure) {
            file = try RegularFile(opening: path)
        } catch {
            if error.code == EMFILE || error.code == ENFILE {
                throw ItemError(.unreadable, stage: .decompress, reason: "cannot open \(path): \(OpenFileLimit.reason)")
            }
            // Fetched, then gone or replaced by something unreadable: a change, not a bad input.
            let changed = version != nil ? " (it changed since it was fetched)" : ""
            throw ItemError(
                version != nil ? .changed : .unreadable, stage: .decompress, reason: "cannot read \(path): \(error.reason)\(changed)",
                underlying: error.code.flatMap { POSIXErrorCode(rawValue: $0) }.map { POSIXError($0) })
        }
        let opened = FileStamp(file.status)
        if let version, version != opened {
            throw Self.changedWhileRead(path)
        }
        // The descriptor's own path opens the file it holds, whatever the input's path names now.
        let held = EncodedSource.file(path: "/proc/self/fd/\(file.descriptor)", byteCount: byteCount, version: opened, name: path)
        let result = Swift.Result { () throws(ItemError) in
            try LibjxlOutput.capturing(held) { () throws(ItemError) in try body(held) }
        }
        var after = stat()
        guard fstat(file.descriptor, &after) == 0, FileStamp(after) == opened, !Self.writtenKeepingTimes(file.status, after) else {
            throw Self.changedWhileRead(path)
        }
        return try result.get()
    }

    /// Whether a file whose size and modification time are as `before` has changed since: a
    /// writer can put those back (`touch -r`, a sync tool keeping times), but not the change
    /// time. A file renamed over the one held changes its change time too, but also its link
    /// count, and what is held is still the version opened.
    private static func writtenKeepingTimes(_ before: stat, _ after: stat) -> Bool {
        let changeTime = (after.st_ctim.tv_sec, after.st_ctim.tv_nsec) != (before.st_ctim.tv_sec, before.st_ctim.tv_nsec)
        return changeTime && after.st_nlink == before.st_nlink
    }

    private static func changedWhileRead(_ path: String) -> ItemError {
        ItemError(
            .changed, stage: .decompress,
            reason:
                "\(path) changed while it was being read: nothing was made from it, and the next run makes it from the new version")
    }
}
