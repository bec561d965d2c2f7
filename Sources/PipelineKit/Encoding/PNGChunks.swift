import Foundation
import Vips

/// The chunks of a PNG file. libpng 1.6 (Debian 12's) writes a kept EXIF block twice: an `eXIf`
/// chunk before the image data and another as the file ends, where PNG allows one, and readers
/// that check the file refuse it.
enum PNGChunks {
    /// The eight bytes every PNG file starts with.
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `png` with its first `eXIf` chunk alone; as it is when it has at most one, or is not the
    /// PNG expected. The chunks' headers are walked before anything is copied, and the file is
    /// copied once.
    static func withOneEXIF(_ png: Data) -> Data {
        guard png.count >= signature.count, png.prefix(signature.count).elementsEqual(signature) else { return png }
        var repeated: [Range<Int>] = []
        var seenEXIF = false
        var offset = png.startIndex + signature.count
        // A chunk is its length, its type, its data and a CRC: each moves the offset on by at
        // least 12 bytes, so the loop ends.
        while offset + 12 <= png.endIndex {
            guard let length = png.storedInteger(at: offset) else { return png }
            let end = offset + 12 + length
            guard end <= png.endIndex else { return png }
            if png[offset + 4..<offset + 8].elementsEqual("eXIf".utf8) {
                if seenEXIF { repeated.append(offset..<end) }
                seenEXIF = true
            }
            offset = end
        }
        guard !repeated.isEmpty else { return png }
        var result = Data(capacity: png.count)
        var copied = png.startIndex
        for range in repeated {
            result.append(png[copied..<range.lowerBound])
            copied = range.upperBound
        }
        result.append(png[copied...])
        return result
    }
}
