import Foundation

extension EncodedSource {
    /// `walk` given the number of bytes there are and the bytes one offset at a time (nil past
    /// the end), or nil when the file cannot be opened. Walks of a file's structure
    /// (`GIFStructure`, `PNGStructure`) read only the blocks of the file they ask for.
    func walkingBytes<Result>(_ walk: (_ byteCount: Int, _ byte: (Int) -> UInt8?) -> Result) -> Result? {
        switch self {
        case .memory(let bytes):
            return bytes.withUnsafeBytes { buffer in
                walk(buffer.count) { offset in offset >= 0 && offset < buffer.count ? buffer[offset] : nil }
            }
        case .file(let path, _, _, _):
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            // The size of what is read, not the size listed when the input was planned.
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return nil }
            var reader = BlockReader(descriptor: descriptor)
            return walk(Int(status.st_size)) { reader.byte(at: $0) }
        }
    }

    /// Bytes of a file read a block at a time, as a walk asks for them.
    private struct BlockReader {
        let descriptor: Int32
        var block = [UInt8](repeating: 0, count: 1 << 16)
        var blockStart = 0
        var blockCount = 0

        init(descriptor: Int32) {
            self.descriptor = descriptor
        }

        mutating func byte(at offset: Int) -> UInt8? {
            guard offset >= 0 else { return nil }
            if offset < blockStart || offset >= blockStart + blockCount {
                let count = block.withUnsafeMutableBytes { buffer in
                    var read = -1
                    repeat { read = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) } while read < 0 && errno == EINTR
                    return read
                }
                guard count > 0 else { return nil }
                (blockStart, blockCount) = (offset, count)
            }
            return block[offset - blockStart]
        }
    }
}
