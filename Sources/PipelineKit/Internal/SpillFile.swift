import Foundation

/// An unlinked temporary file for what a run keeps for its end but not in memory (the
/// manifest's entries, the report's items, the trace's events): a run of many inputs holds a
/// few bytes for each record, and the file goes when it is closed, however the process ends.
///
/// Not for several threads at once: its owner holds it behind a lock, or in one task.
final class SpillFile {
    private let descriptor: Int32
    /// What it is for, in errors ("the manifest's entries").
    private let purpose: String
    /// Where it is, in errors: a full disk there is the cause, not where the result goes.
    private let place: String
    /// Bytes appended so far.
    private(set) var size: Int64 = 0

    /// A file in `folder`, for `purpose`.
    init(folder: String, for purpose: String) throws(ReportWriterError) {
        var template = Array((folder + "/.spill" + ImageWriter.temporaryMarker + "XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw ReportWriterError(path: folder, reason: "no file can be made there to keep \(purpose) in: \(Self.reason)")
        }
        // Open, it stays readable; unlinked, no name of it is left behind.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
        self.purpose = purpose
        let temporary = FileManager.default.temporaryDirectory.path
        place = folder == temporary ? "the folder for temporary files (\(folder); TMPDIR sets it)" : folder
    }

    /// A file in the system's folder for temporary files (`TMPDIR`, else /tmp).
    convenience init(for purpose: String) throws(ReportWriterError) {
        try self.init(folder: FileManager.default.temporaryDirectory.path, for: purpose)
    }

    deinit { close(descriptor) }

    /// Appends `data`; returns the offset it starts at.
    @discardableResult
    func append(_ data: Data) throws(ReportWriterError) -> Int64 {
        let offset = size
        let written = data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let count = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        guard written else { throw ReportWriterError(path: "", reason: "\(purpose) could not be kept in \(place): \(Self.reason)") }
        size += Int64(data.count)
        return offset
    }

    /// Appends `item` to the list the file holds: after `separator` unless it is the first.
    func append(item: Data, separator: String) throws(ReportWriterError) {
        try append(size == 0 ? item : Data(separator.utf8) + item)
    }

    /// The `count` bytes at `offset`.
    func read(_ count: Int, at offset: Int64) throws(ReportWriterError) -> Data {
        guard let data = Self.read(descriptor, count, at: offset) else {
            throw ReportWriterError(path: "", reason: "\(purpose) could not be read back from \(place): \(Self.reason)")
        }
        return data
    }

    /// Hands every byte appended to `write`, a piece at a time; false when `write` refused one.
    func copyAll(to write: (Data) -> Bool) throws(ReportWriterError) -> Bool {
        let piece: Int64 = 1 << 20
        var offset: Int64 = 0
        while offset < size {
            guard write(try read(Int(min(piece, size - offset)), at: offset)) else { return false }
            offset += piece
        }
        return true
    }

    /// A reader of the file that stays open as long as it lives, for readers on any thread once
    /// nothing more is appended; nil when the system has no descriptor left to give it.
    func reader() -> Reader? {
        let copy = dup(descriptor)
        return copy < 0 ? nil : Reader(descriptor: copy)
    }

    /// Reads a spill file that nothing appends to any more.
    final class Reader: Sendable {
        private let descriptor: Int32

        fileprivate init(descriptor: Int32) { self.descriptor = descriptor }

        deinit { close(descriptor) }

        /// The `count` bytes at `offset`, or nil when they cannot be read.
        func read(_ count: Int, at offset: Int64) -> Data? { SpillFile.read(descriptor, count, at: offset) }
    }

    /// The `count` bytes at `offset` of the open file `descriptor`, or nil when it has fewer.
    static func read(_ descriptor: Int32, _ count: Int, at offset: Int64) -> Data? {
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { bytes -> Bool in
            var done = 0
            while done < count {
                let read = pread(descriptor, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if read < 0, errno == EINTR { continue }
                guard read > 0 else { return false }
                done += read
            }
            return true
        }
        return complete ? data : nil
    }

    private static var reason: String { String(cString: strerror(errno)) }
}
