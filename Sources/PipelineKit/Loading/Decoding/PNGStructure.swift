import CDeflate
import Foundation
import Vips

/// Walks of a PNG's chunks by their lengths and checksums, without decoding them.
///
/// Before libpng sees a file: whether the chunks it declares before its image data fit in its
/// bytes. libpng allocates and clears a buffer of the length a chunk declares before it reads
/// the chunk, so a file of a few dozen bytes declaring a gigabyte of text costs that gigabyte
/// and seconds of clearing, outside any memory estimate, before libpng finds the file too
/// short and libvips refuses it. And how much its compressed text and profile chunks there
/// inflate to: libpng inflates and keeps each while libvips reads the header, so a small file
/// of compressed text could hold far more than its pixels, outside any estimate and past any
/// decode timeout.
///
/// After libvips failed to decode one: what is wrong with its chunks, which libvips' own
/// message ("libpng read error") does not say.
enum PNGStructure {
    /// A chunk that declares more bytes than follow it.
    struct OversizedChunk: Equatable {
        /// The chunk's four-letter type, as the file spells it.
        let type: String
        /// The length it declares.
        let declared: Int
        /// The bytes after its header, to the end of the file.
        let available: Int

        /// What it says of the file: its data, or the checksum after them, is cut short.
        var cutShort: String {
            declared <= available
                ? "the PNG is cut short: its \(type) chunk has its \(declared) bytes but not the checksum after them"
                : "the PNG is cut short: its \(type) chunk declares \(declared) bytes and \(available) follow"
        }
    }

    /// What a walk of the chunks found first.
    enum Finding: Equatable {
        /// Every chunk walked is whole (and, when checked, matches its CRC).
        case whole
        /// A chunk declares more bytes than the file has after its header.
        case oversized(OversizedChunk)
        /// The compressed text and profile chunks before the image data inflate to more than
        /// `inflatedMetadataLimit`, the chunk of `type` reaching it.
        case inflatesPast(type: String)
        /// More than `chunksWalked` chunks come before the image data.
        case tooManyChunks
        /// The bytes end between chunks, or inside a chunk's header, before the IEND chunk:
        /// after the chunk of type `after` (nil: after the signature).
        case endsBefore(after: String?)
        /// The critical chunk of `type` at byte `offset` does not match its CRC.
        case checksumFails(type: String, offset: Int)
        /// The bytes at `offset`, after the chunk of type `after` (nil: after the signature),
        /// are not a chunk's header (a length past 2^31 - 1, a type that is not four letters).
        case notAChunk(offset: Int, after: String?)
        /// The first chunk, of `type`, is not the IHDR chunk every PNG starts with.
        case noHeaderFirst(type: String)
        /// The file does not start with PNG's signature.
        case notPNG
    }

    /// The first chunk before the image data that declares more bytes than the file has after
    /// it, or nil: none does, or the walk met something else first (not a PNG, a chunk header
    /// cut short or malformed, more chunks than any real file has before its pixels).
    static func oversizedChunk(in source: EncodedSource) -> OversizedChunk? {
        let finding = source.walkingBytes { bytes in walk(bytes, toImageData: true, checksums: false) }
        guard case .oversized(let chunk) = finding else { return nil }
        return chunk
    }

    /// Why libvips is not to read the header of `source`, a PNG, in words, or nil: a chunk
    /// before the image data declares more bytes than follow, or the compressed text and
    /// profiles there inflate past `inflatedMetadataLimit`.
    static func headerRefusal(in source: EncodedSource) -> String? {
        source.walkingBytes(headerRefusal) ?? nil
    }

    /// `headerRefusal(in:)` of bytes already open for a walk.
    static func headerRefusal(_ bytes: SourceBytes) -> String? {
        switch walk(bytes, toImageData: true, checksums: false) {
        case .oversized(let chunk): chunk.cutShort
        case .inflatesPast(let type):
            "the PNG's compressed text and profile chunks before its pixels inflate to more than "
                + "\(inflatedMetadataLimit >> 20) MB (its \(type) chunk passes it): refused as a decompression bomb"
        case .tooManyChunks:
            "the PNG has more than \(chunksWalked) chunks before its pixels, which no image has: refused as a decompression bomb"
        default: nil
        }
    }

    /// The most bytes the zTXt, compressed iTXt and iCCP chunks before a PNG's image data may
    /// inflate to, together: far more than the text and profile of any photograph.
    static let inflatedMetadataLimit = 16 << 20

    /// What is wrong with the chunks of a PNG libvips could not decode, in words, or nil: the
    /// file is not a PNG, or its chunks are whole (the fault, if the file's, is inside the
    /// compressed data). The chunks are walked to the IEND chunk; an ancillary chunk that fails
    /// its CRC is passed over, as libpng drops it.
    static func damage(in bytes: SourceBytes) -> String? {
        switch walk(bytes, toImageData: false, checksums: true) {
        case .oversized(let chunk): chunk.cutShort
        case .endsBefore(let after):
            "the PNG is cut short: its bytes end after \(place(after)), without the IEND chunk that closes a PNG"
        case .checksumFails(let type, let offset):
            "the PNG is damaged: its \(type) chunk at byte \(offset) does not match its CRC"
        case .notAChunk(let offset, let after):
            "the PNG is damaged: the bytes at \(offset), after \(place(after)), are not a PNG chunk"
        case .noHeaderFirst(let type):
            "the PNG is damaged: its first chunk is \(type.quotedValue), where every PNG starts with IHDR"
        case .whole, .notPNG, .inflatesPast, .tooManyChunks: nil
        }
    }

    /// "its signature", or "its IDAT chunk": what a place in the file comes after.
    private static func place(_ after: String?) -> String {
        after.map { "its \($0) chunk" } ?? "its signature"
    }

    /// The eight bytes every PNG starts with.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The most chunks a PNG may have before its image data: a real one has a handful.
    static let chunksWalked = 10_000

    /// Walks the chunks from the signature on: to the first image data chunk (past
    /// `chunksWalked` chunks, `.tooManyChunks`), or to the IEND chunk, checking the CRCs of critical chunks
    /// when `checksums` is set. A walk to the image data leaves a header cut short or malformed
    /// to libvips (`.whole`), as libpng refuses those before it allocates anything, and counts
    /// what the compressed text and profiles inflate to.
    static func walk(_ bytes: SourceBytes, toImageData: Bool, checksums: Bool) -> Finding {
        guard bytes.matches(signature, at: 0) else { return .notPNG }
        var offset = signature.count
        var previous: String?
        var walked = 0
        var metadata = InflatedMetadata()
        // Each chunk moves the offset on by at least its 12 bytes of header and CRC: the walk
        // ends at the end of the file.
        while true {
            var header: [UInt8] = []
            for index in 0..<8 {
                guard let value = bytes.byte(at: offset + index) else { return toImageData ? .whole : .endsBefore(after: previous) }
                header.append(value)
            }
            let declared = header.storedInteger(at: 0) ?? 0
            // libpng refuses a length past 2^31 - 1 or a type that is not four letters before it
            // allocates anything, and says so.
            guard declared <= 0x7FFF_FFFF, header[4..<8].allSatisfy({ (0x41...0x5A).contains($0 & ~0x20) }) else {
                return toImageData ? .whole : .notAChunk(offset: offset, after: previous)
            }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            // libpng refuses such a file before it allocates anything.
            if previous == nil, type != "IHDR" { return toImageData ? .whole : .noHeaderFirst(type: type) }
            if toImageData, type == "IDAT" { return .whole }
            let available = bytes.count - (offset + 8)
            // The chunk's data and its CRC.
            guard declared + 4 <= available else {
                return .oversized(OversizedChunk(type: type, declared: declared, available: max(0, available)))
            }
            // A critical chunk's type starts with a capital letter; libpng drops an ancillary
            // chunk whose CRC fails, and reads on.
            if checksums, header[4] & 0x20 == 0 {
                let stored = bytes.word(at: offset + 8 + declared, bigEndian: true)
                guard let computed = bytes.crc32(from: offset + 4, length: 4 + declared), stored == Int(computed) else {
                    return .checksumFails(type: type, offset: offset)
                }
            }
            if type == "IEND" { return .whole }
            if toImageData, !metadata.add(type, at: offset + 8, length: declared, in: bytes) { return .inflatesPast(type: type) }
            offset += 8 + declared + 4
            previous = type
            walked += 1
            // libpng would read on, inflating what follows: more chunks than any image has
            // before its pixels are a bomb's padding.
            if toImageData, walked == chunksWalked { return .tooManyChunks }
        }
    }

    /// The bytes the compressed metadata chunks walked so far inflate to.
    private struct InflatedMetadata: ~Copyable {
        private var inflated = 0
        private var decompressor: OpaquePointer?
        /// Room for what is left of the limit and one byte more: only the bytes written are
        /// ever touched.
        private var output: UnsafeMutableRawPointer?

        deinit {
            if let decompressor { libdeflate_free_decompressor(decompressor) }
            free(output)
        }

        /// Counts the chunk of `type` whose data are the `length` bytes at `offset`, when it is
        /// compressed text or a profile; false once the chunks inflate past the limit.
        mutating func add(_ type: String, at offset: Int, length: Int, in bytes: SourceBytes) -> Bool {
            guard let start = Self.compressedStart(type, at: offset, length: length, in: bytes) else { return true }
            let left = inflatedMetadataLimit - inflated
            // Compressed data inflate to about their own length at least: less only by the
            // stored blocks' five bytes in 64 KiB, and zlib's six.
            guard offset + length - start <= left + left / 8192 + 64 else { return false }
            // Bytes that cannot be read now are libvips' to find wanting.
            guard let data = bytes.copy(from: start, length: offset + length - start) else { return true }
            if decompressor == nil { decompressor = libdeflate_alloc_decompressor() }
            if output == nil { output = malloc(inflatedMetadataLimit + 1) }
            guard let decompressor, let output else { return true }
            var written = 0
            var read = 0
            // The deflate data after zlib's two-byte header, its checksum left unread: libvips
            // has libpng ignore it, so a wrong one inflates all the same.
            guard data.count > 2 else { return true }
            let result = data.withUnsafeBytes { input in
                libdeflate_deflate_decompress_ex(decompressor, input.baseAddress! + 2, input.count - 2, output, left + 1, &read, &written)
            }
            if result == LIBDEFLATE_INSUFFICIENT_SPACE || written > left { return false }
            // libpng inflates a stream it then drops (cut short, damaged) as far as it goes, which
            // libdeflate does not say: it counts as the most its bytes inflate to, deflate's
            // 1032 to 1.
            inflated += result == LIBDEFLATE_SUCCESS ? written : min(left + 1, (data.count - 2) * 1032)
            return inflated <= inflatedMetadataLimit
        }

        /// Where the compressed bytes of a zTXt, compressed iTXt or iCCP chunk start: after
        /// its keyword (and, in iTXt, its flags, language and translated keyword); nil for any
        /// other chunk, or one too malformed for libpng to inflate.
        private static func compressedStart(_ type: String, at offset: Int, length: Int, in bytes: SourceBytes) -> Int? {
            guard type == "zTXt" || type == "iTXt" || type == "iCCP" else { return nil }
            let end = offset + length
            func afterNull(from start: Int) -> Int? {
                var position = start
                while position < end {
                    guard let byte = bytes.byte(at: position) else { return nil }
                    if byte == 0 { return position + 1 }
                    position += 1
                }
                return nil
            }
            guard let keywordEnd = afterNull(from: offset) else { return nil }
            guard type == "iTXt" else { return keywordEnd + 1 < end ? keywordEnd + 1 : nil }
            guard bytes.byte(at: keywordEnd) == 1, let language = afterNull(from: keywordEnd + 2),
                let translated = afterNull(from: language), translated < end
            else { return nil }
            return translated
        }
    }
}
