import CDeflate
import Foundation
import Vips

extension EncodedSource {
    /// `walk` given the bytes as `SourceBytes`, or nil when the file cannot be opened. Walks of a
    /// file's structure (`GIFStructure`, `PNGStructure`, `FileDamage`) read only the blocks of
    /// the file they ask for.
    func walkingBytes<Result>(_ walk: (SourceBytes) -> Result) -> Result? {
        switch self {
        case .memory(let bytes):
            return bytes.withUnsafeBytes { buffer in walk(SourceBytes(memory: buffer)) }
        case .file(let path, _, _, _):
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            // The size of what is read, not the size listed when the input was planned.
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return nil }
            return walk(SourceBytes(descriptor: descriptor, count: Int(status.st_size)))
        }
    }
}

/// An input's bytes as a walk of its structure reads them: from memory, or from the file a
/// block at a time, only the blocks asked for. Valid only inside the walk it is given to.
final class SourceBytes {
    /// How many bytes there are.
    let count: Int
    private let memory: UnsafeRawBufferPointer?
    private let descriptor: Int32
    /// The block of the file read last; empty until a byte of a file is asked for.
    private var block: [UInt8] = []
    private var blockStart = 0
    private var blockCount = 0

    fileprivate init(memory: UnsafeRawBufferPointer) {
        (self.memory, count, descriptor) = (memory, memory.count, -1)
    }

    fileprivate init(descriptor: Int32, count: Int) {
        (memory, self.count, self.descriptor) = (nil, count, descriptor)
    }

    /// The byte at `offset`, or nil past the end (or when the file cannot be read there).
    func byte(at offset: Int) -> UInt8? {
        guard offset >= 0 else { return nil }
        if let memory { return offset < memory.count ? memory[offset] : nil }
        guard load(at: offset) else { return nil }
        return block[offset - blockStart]
    }

    /// Whether the bytes at `offset` are `expected`.
    func matches(_ expected: [UInt8], at offset: Int) -> Bool {
        expected.indices.allSatisfy { byte(at: offset + $0) == expected[$0] }
    }

    /// The 32-bit unsigned word at `offset` in the byte order given, or nil past the end.
    func word(at offset: Int, bigEndian: Bool) -> Int? {
        StoredInteger.at(offset, bigEndian: bigEndian, byte: byte(at:))
    }

    /// The CRC-32 of the `length` bytes from `offset`, or nil when they are not all there.
    func crc32(from offset: Int, length: Int) -> UInt32? {
        guard offset >= 0, length >= 0, offset + length <= count else { return nil }
        if let memory {
            guard let base = memory.baseAddress else { return 0 }
            return UInt32(libdeflate_crc32(0, base + offset, length))
        }
        var crc: UInt32 = 0
        var position = offset
        while position < offset + length {
            guard load(at: position) else { return nil }
            let available = min(blockStart + blockCount, offset + length) - position
            crc = block.withUnsafeBytes { UInt32(libdeflate_crc32(crc, $0.baseAddress! + (position - blockStart), available)) }
            position += available
        }
        return crc
    }

    /// The `length` bytes from `offset`, or nil when they are not all there.
    func copy(from offset: Int, length: Int) -> [UInt8]? {
        guard offset >= 0, length >= 0, offset + length <= count else { return nil }
        if let memory { return Array(memory[offset..<offset + length]) }
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let read = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, length - done, off_t(offset + done))
            }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { return nil }
            done += read
        }
        return bytes
    }

    /// Makes the block hold `offset`, reading from there when it does not; false past the end.
    private func load(at offset: Int) -> Bool {
        if offset >= blockStart, offset < blockStart + blockCount { return true }
        if block.isEmpty { block = [UInt8](repeating: 0, count: 1 << 16) }
        let read = block.withUnsafeMutableBytes { buffer in
            var read = -1
            repeat { read = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) } while read < 0 && errno == EINTR
            return read
        }
        guard read > 0 else { return false }
        (blockStart, blockCount) = (offset, read)
        return true
    }
}
