import CVips
import Foundation

/// Files and fetched bytes read whole into a buffer from `pl_map_buffer`, for the readers that
/// decode from memory (whole PNGs, WebP); the caller unmaps it or hands it on.
enum WholeFile {
    /// The file at `path`, read whole; nil when it cannot be read, is empty, or is larger than
    /// `mostBytes`.
    static func read(_ path: String, mostBytes: Int) -> UnsafeMutableRawBufferPointer? {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0, Int(status.st_size) <= mostBytes,
            let buffer = pl_map_buffer(Int(status.st_size))
        else { return nil }
        let size = Int(status.st_size)
        var read = 0
        while read < size {
            let count = Foundation.read(descriptor, buffer + read, size - read)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            read += count
        }
        guard read == size else {
            pl_unmap_buffer(buffer, size)
            return nil
        }
        return UnsafeMutableRawBufferPointer(start: buffer, count: size)
    }

    /// A copy of `bytes`; nil when there are none or more than `mostBytes`.
    static func copy(_ bytes: VipsBytes, mostBytes: Int) -> UnsafeMutableRawBufferPointer? {
        guard let base = bytes.base, bytes.count <= mostBytes, let buffer = pl_map_buffer(bytes.count) else { return nil }
        withExtendedLifetime(bytes) { buffer.copyMemory(from: base, byteCount: bytes.count) }
        return UnsafeMutableRawBufferPointer(start: buffer, count: bytes.count)
    }

    /// Gives a buffer from `read` or `copy` back.
    static func release(_ buffer: UnsafeMutableRawBufferPointer) {
        pl_unmap_buffer(buffer.baseAddress, buffer.count)
    }
}
