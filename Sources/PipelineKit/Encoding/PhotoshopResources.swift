/// A Photoshop image resource block (the `Photoshop 3.0` APP13 segment of a JPEG), which libvips
/// reads and writes whole as `iptc-data`. Beside the IPTC record, editors keep in it a preview
/// of the picture before any crop (resource 0x0409, 0x040C) and copies of the EXIF block, its
/// GPS position included (0x0422), and of the XMP (0x0424): `"keep": ["iptc"]` keeps the IPTC
/// record alone.
enum PhotoshopResources {
    /// The resource that holds the IPTC-NAA record.
    static let iptcRecord: UInt16 = 0x0404

    private static let header = Array("Photoshop 3.0\0".utf8)
    private static let signature = Array("8BIM".utf8)
    /// The byte each dataset of an IPTC-NAA record starts with.
    private static let datasetMarker: UInt8 = 0x1C

    /// A block with the header, holding `record` as its IPTC resource, with an empty name.
    static func block(holding record: [UInt8]) -> [UInt8] {
        let length = UInt32(clamping: record.count)
        let lengthBytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) }
        let pad: [UInt8] = record.count % 2 == 1 ? [0] : []
        return header + signature + [UInt8(iptcRecord >> 8), UInt8(iptcRecord & 0xFF), 0, 0] + lengthBytes + record + pad
    }

    /// The block `bytes` with the IPTC record alone, under the `Photoshop 3.0` header JPEG
    /// readers look for (a TIFF's block has none); nil when the block cannot be read to its end
    /// (it is then not kept at all) or holds no IPTC record. A bare record (a TIFF's tag 33723
    /// holds one: its datasets start with 0x1C) is put in a block of its own.
    static func iptcOnly(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.first == datasetMarker { return block(holding: bytes) }
        // libtiff reads tag 33723 as 32-bit numbers: from a big-endian TIFF each 4 bytes come reversed.
        if bytes.count % 4 == 0, bytes.count >= 4, bytes[3] == datasetMarker {
            return block(holding: stride(from: 0, to: bytes.count, by: 4).flatMap { bytes[$0..<($0 + 4)].reversed() })
        }
        let start = bytes.starts(with: header) ? header.count : 0
        var kept = header
        var at = start
        while at < bytes.count {
            // Signature, ID, a Pascal name padded to an even length, a length, the data padded
            // to an even length (Adobe's "Image Resource Blocks").
            guard at + 7 <= bytes.count, bytes[at..<(at + 4)].elementsEqual(signature) else { return nil }
            let id = UInt16(bytes[at + 4]) << 8 | UInt16(bytes[at + 5])
            let nameLength = Int(bytes[at + 6])
            let lengthAt = at + 6 + (nameLength + 2) / 2 * 2
            guard lengthAt + 4 <= bytes.count else { return nil }
            let length = bytes[lengthAt..<(lengthAt + 4)].reduce(0) { $0 << 8 | Int($1) }
            let end = lengthAt + 4 + length
            guard end <= bytes.count else { return nil }
            let padded = min(bytes.count, end + length % 2)
            if id == iptcRecord { kept += bytes[at..<padded] }
            at = padded
        }
        return kept.count > header.count ? kept : nil
    }
}
