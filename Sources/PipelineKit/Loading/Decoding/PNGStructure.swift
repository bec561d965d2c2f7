/// Whether the chunks a PNG declares before its image data fit in its bytes. libpng allocates
/// and clears a buffer of the length a chunk declares before it reads the chunk, so a file of a
/// few dozen bytes declaring a gigabyte of text costs that gigabyte and seconds of clearing,
/// outside any memory estimate, before libpng finds the file too short and libvips refuses it.
/// The chunks are walked by their lengths, without reading their data.
enum PNGStructure {
    /// A chunk that declares more bytes than follow it.
    struct OversizedChunk: Equatable {
        /// The chunk's four-letter type, as the file spells it.
        let type: String
        /// The length it declares.
        let declared: Int
        /// The bytes after its header, to the end of the file.
        let available: Int
    }

    /// The first chunk before the image data that declares more bytes than the file has after
    /// it, or nil: none does, or the walk met something libvips' loader is left to judge (not a
    /// PNG, a chunk header cut short or malformed, more chunks than any real file has before
    /// its pixels).
    static func oversizedChunk(in source: EncodedSource) -> OversizedChunk? {
        source.walkingBytes { byteCount, byte in walk(byteCount: byteCount, byte) } ?? nil
    }

    /// The most chunks walked before the image data.
    static let chunksWalked = 10_000

    /// Walks the chunk headers from the signature on, reading each byte by `byte`.
    static func walk(byteCount: Int, _ byte: (Int) -> UInt8?) -> OversizedChunk? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard signature.indices.allSatisfy({ byte($0) == signature[$0] }) else { return nil }
        var offset = signature.count
        for _ in 0..<chunksWalked {
            var header: [UInt8] = []
            for index in 0..<8 {
                guard let value = byte(offset + index) else { return nil }
                header.append(value)
            }
            let declared = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
            // libpng refuses a length past 2^31 - 1 or a type that is not four letters before it
            // allocates anything, and says so.
            guard declared <= 0x7FFF_FFFF, header[4..<8].allSatisfy({ (0x41...0x5A).contains($0 & ~0x20) }) else { return nil }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if type == "IDAT" { return nil }
            let available = byteCount - (offset + 8)
            // The chunk's data and its CRC.
            if declared + 4 > available {
                return OversizedChunk(type: type, declared: declared, available: max(0, available))
            }
            offset += 8 + declared + 4
        }
        return nil
    }
}
