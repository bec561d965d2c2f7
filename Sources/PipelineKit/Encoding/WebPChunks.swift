import Foundation
import Vips

/// The chunks of a RIFF WebP file (a still image's or an animation's).
enum WebPChunks {
    /// VP8X's flags for the metadata chunks: ICC profile, EXIF, XMP.
    static let iccFlag: UInt8 = 0b0010_0000
    static let exifFlag: UInt8 = 0b0000_1000
    static let xmpFlag: UInt8 = 0b0000_0100

    /// `webp` without the chunks `isRemoved` names, with `flags` cleared in its VP8X chunk, the
    /// chunk that announces them; as it is when it has none of them, or is not the RIFF WebP
    /// expected. The file is walked whole before anything is copied, and copied once.
    static func removing(from webp: Data, flags: UInt8, where isRemoved: (String) -> Bool) -> Data {
        let start = webp.startIndex
        guard webp.count >= 12, webp.prefix(4).elementsEqual("RIFF".utf8), webp[start + 8..<start + 12].elementsEqual("WEBP".utf8)
        else { return webp }
        var kept: [Range<Int>] = []
        var removedAny = false
        var offset = start + 12
        // Each chunk moves the offset on by at least its 8-byte header: the loop ends.
        while offset + 8 <= webp.endIndex {
            guard let size = webp.storedInteger(at: offset + 4, bigEndian: false) else { return webp }
            let end = offset + 8 + size + size % 2
            guard end <= webp.endIndex else { return webp }
            if isRemoved(String(decoding: webp[offset..<offset + 4], as: UTF8.self)) {
                removedAny = true
            } else {
                kept.append(offset..<end)
            }
            offset = end
        }
        guard removedAny else { return webp }
        let length = 4 + kept.reduce(0) { $0 + $1.count }
        var result = Data(capacity: 8 + length)
        result.append(contentsOf: Array("RIFF".utf8))
        result.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) })
        result.append(contentsOf: Array("WEBP".utf8))
        for range in kept {
            let chunkStart = result.count
            result.append(webp[range])
            // VP8X: its 4-byte name, its size, then the flags.
            if result[chunkStart..<chunkStart + 4].elementsEqual("VP8X".utf8), range.count > 8 { result[chunkStart + 8] &= ~flags }
        }
        return result
    }
}
