#if Server
import Foundation
import Hummingbird
import PipelineKit

/// A file opened for an answer, with the version it had when opened; closed when the last
/// answer that holds it is done with it, sent or not (a HEAD request sends no body).
final class OpenedFile: Sendable {
    /// The path it was opened at, for messages.
    let path: String
    /// Its version when opened: the size and version an answer's headers describe.
    let stamp: FileStamp
    private let descriptor: Int32

    /// The file was written to while it was sent.
    struct Changed: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) was written to while it was sent" }
    }

    /// Opens the file at `path`, or nil when it cannot be opened. Blocks on the disk.
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard let stamp = FileStamp(descriptor: descriptor) else {
            close(descriptor)
            return nil
        }
        self.path = path
        self.descriptor = descriptor
        self.stamp = stamp
    }

    deinit { close(descriptor) }

    /// The SHA-256 of its bytes in lowercase hex, read a piece at a time; nil when they cannot
    /// be read, or the file was written to meanwhile. Blocks on the disk.
    func sha256() -> String? {
        SHA256.hex(ofFile: descriptor, byteCount: Int(stamp.size)).flatMap { isUnchanged ? $0 : nil }
    }

    /// `count` bytes from `offset`, or nil when the file has fewer there now or cannot be
    /// read. Blocks on the disk.
    func piece(at offset: Int, count: Int) -> ByteBuffer? {
        var buffer = ByteBuffer()
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw -> Int in
            var total = 0
            while total < count {
                let got = pread(descriptor, raw.baseAddress! + total, count - total, off_t(offset + total))
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { break }
                total += got
            }
            return total
        }
        return read == count ? buffer : nil
    }

    /// Whether the file still has the version it was opened at.
    var isUnchanged: Bool { FileStamp(descriptor: descriptor) == stamp }
}
#endif
