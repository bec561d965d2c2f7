import Vips

/// What is wrong with a file libvips could not read, from the lengths and checksums its format
/// declares, in words: libvips' own messages for a file cut short range from vague ("unable to
/// parse image", "error JxlDecoderProcessInput") to wrong (a TIFF cut before its directory is
/// "not an image libvips can read").
///
/// Only the structure is walked, never the compressed data, so nil says nothing of the pixels:
/// the file's structure is whole, or its format is not one walked here (JPEG, whose loader says
/// when its data ends early; a bare JPEG XL or JPEG 2000 codestream). A GIF's loader says so
/// too, but only through libvips' one error buffer, which another thread's failure may empty.
enum FileDamage {
    /// The reason `source` could not be read, when its structure shows one.
    static func reason(in source: EncodedSource) -> String? {
        source.walkingBytes { bytes -> String? in
            if bytes.matches(PNGStructure.signature, at: 0) { return PNGStructure.damage(in: bytes) }
            if bytes.matches(Array("RIFF".utf8), at: 0), bytes.matches(Array("WEBP".utf8), at: 8) { return riffDamage(bytes) }
            let signatureBox =
                bytes.matches([0, 0, 0, 12] + Array("JXL ".utf8), at: 0) || bytes.matches([0, 0, 0, 12] + Array("jP  ".utf8), at: 0)
            if bytes.matches(Array("ftyp".utf8), at: 4) || signatureBox {
                return boxDamage(bytes)
            }
            if bytes.matches(Array("GIF8".utf8), at: 0), case .truncated(let frames) = GIFStructure.walk({ bytes.byte(at: $0) }) {
                return "the GIF is cut short: its bytes end before its trailer, after \(frames) whole frame\(frames == 1 ? "" : "s")"
            }
            if bytes.matches(Array("II".utf8) + [42, 0], at: 0) { return tiffDamage(bytes, bigEndian: false) }
            if bytes.matches(Array("MM".utf8) + [0, 42], at: 0) { return tiffDamage(bytes, bigEndian: true) }
            return nil
        } ?? nil
    }

    /// A WebP's RIFF header declares the bytes after it.
    static func riffDamage(_ bytes: SourceBytes) -> String? {
        guard let declared = bytes.word(at: 4, bigEndian: false), declared + 8 > bytes.count else { return nil }
        return "the WebP is cut short: its RIFF header declares \(declared) bytes and \(bytes.count - 8) follow"
    }

    /// The top-level boxes of an ISO base media file (AVIF, HEIF, a JPEG XL or JPEG 2000 file),
    /// walked by their sizes: the first that declares more bytes than follow it.
    static func boxDamage(_ bytes: SourceBytes) -> String? {
        let format = boxFormat(bytes)
        var offset = 0
        // Each box moves the offset on by at least its 8-byte header: the walk ends.
        while offset + 8 <= bytes.count {
            let letters = (4..<8).compactMap { bytes.byte(at: offset + $0) }
            // A type is four printable characters; anything else is not named in a message.
            let box = letters.allSatisfy { (0x20...0x7E).contains($0) } ? "its \(String(decoding: letters, as: UTF8.self)) box" : "a box"
            let size: Int
            let header: Int
            switch ISOBoxSize.at(offset, byte: bytes.byte(at:)) {
            case .declared(let declared, let length)?: (size, header) = (declared, length)
            case .cutShort?: return "the \(format) is cut short: its bytes end inside a box header at byte \(offset)"
            case .beyondAnyFile?: return "the \(format) is damaged: \(box) at byte \(offset) declares more bytes than any file has"
            // Size 0: the box runs to the end of the file.
            case .toTheEnd?, nil: return nil
            }
            guard size >= header else { return "the \(format) is damaged: \(box) at byte \(offset) declares \(size) bytes" }
            // Compared so, a 64-bit size cannot overflow.
            if size > bytes.count - offset {
                return
                    "the \(format) is cut short: \(box) declares \(size - header) bytes and \(max(0, bytes.count - offset - header)) follow"
            }
            offset += size
        }
        // A few bytes left over that are not a whole box header: a file cut inside one.
        return offset < bytes.count ? "the \(format) is cut short: its bytes end inside a box header at byte \(offset)" : nil
    }

    /// What an ISO base media file is called, by its signature box or its brand: "AVIF",
    /// "HEIF", "JPEG XL file", "JPEG 2000 file", or "file".
    static func boxFormat(_ bytes: SourceBytes) -> String {
        if bytes.matches(Array("JXL ".utf8), at: 4) { return "JPEG XL file" }
        if bytes.matches(Array("jP  ".utf8), at: 4) { return "JPEG 2000 file" }
        let brand = String(decoding: (8..<12).compactMap { bytes.byte(at: $0) }, as: UTF8.self)
        switch brand {
        case "avif", "avis": return "AVIF"
        case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1": return "HEIF"
        default: return "file"
        }
    }

    /// A classic TIFF's first directory: its offset, then its entry count and entries.
    static func tiffDamage(_ bytes: SourceBytes, bigEndian: Bool) -> String? {
        guard let offset = bytes.word(at: 4, bigEndian: bigEndian) else {
            return "the TIFF is cut short: its bytes end inside its header"
        }
        guard let entries = StoredInteger.at(offset, count: 2, bigEndian: bigEndian, byte: bytes.byte(at:)) else {
            return "the TIFF is cut short: its first directory is at byte \(offset) and its bytes end at \(bytes.count)"
        }
        // The count, 12 bytes an entry, and the next directory's offset.
        let end = offset + 2 + entries * 12 + 4
        guard end <= bytes.count else {
            return "the TIFF is cut short: its first directory, at byte \(offset), ends at \(end) and its bytes end at \(bytes.count)"
        }
        // Its strips (or tiles) by where they start and how long they are: libtiff names the
        // first one past the end as a read error at scanline 4294967295.
        let read = { (tag: Int) in tiffValues(tag, bytes, directory: offset, entries: entries, bigEndian: bigEndian) }
        for (starts, lengths, pieces) in [(273, 279, "strips"), (324, 325, "tiles")] {
            guard let offsets = read(starts), let counts = read(lengths), offsets.count == counts.count else { continue }
            let dataEnd = zip(offsets, counts).map { $0 + $1 }.max() ?? 0
            if dataEnd > bytes.count {
                return "the TIFF is cut short: its first image's \(pieces) run to byte \(dataEnd) and its bytes end at \(bytes.count)"
            }
        }
        return nil
    }

    /// The most values of one TIFF field read: a strip or tile each, far more than a file the
    /// decoder admits has.
    static let tiffValuesRead = 1 << 20

    /// The values of the field `tag` (SHORT or LONG) in the directory at `directory` of
    /// `entries` entries, or nil when it has none, of another type, or its values are not all
    /// in the file.
    static func tiffValues(_ tag: Int, _ bytes: SourceBytes, directory: Int, entries: Int, bigEndian: Bool) -> [Int]? {
        let integer = { (offset: Int, width: Int) in StoredInteger.at(offset, count: width, bigEndian: bigEndian, byte: bytes.byte(at:)) }
        for index in 0..<entries {
            let entry = directory + 2 + index * 12
            guard integer(entry, 2) == tag else { continue }
            guard let type = integer(entry + 2, 2), let count = integer(entry + 4, 4), count <= tiffValuesRead else { return nil }
            let width: Int
            switch type {
            case 3: width = 2
            case 4: width = 4
            default: return nil
            }
            // Values that fit in the entry's last four bytes are there; others where those point.
            guard let start = count * width <= 4 ? entry + 8 : integer(entry + 8, 4) else { return nil }
            var values: [Int] = []
            values.reserveCapacity(count)
            for value in 0..<count {
                guard let read = integer(start + value * width, width) else { return nil }
                values.append(read)
            }
            return values
        }
        return nil
    }
}
