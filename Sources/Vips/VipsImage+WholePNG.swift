import CDeflate
import CVips
import Foundation

/// Reading a common PNG whole with libdeflate rather than row by row through libpng and zlib.
///
/// PNG cannot shrink on load, so its decode is most of the work of making thumbnails from it,
/// and most of that decode is inflating: libdeflate inflates two to four times as fast as zlib
/// (it needs the whole stream and the whole output at once, so the image is held whole, which
/// row-by-row decoding avoids). Only the plainest PNGs are read this way (8 bits, grey or RGB,
/// with or without alpha, not interlaced, no transparency chunk); anything else, and any file
/// this reader finds a fault in, is left to libvips' own loader, which then reads it and reports
/// what is wrong exactly as it always has.
extension VipsImage {
    /// What reading the PNG that `header` describes whole holds at once: the inflated rows, one
    /// filter byte each, and the file's bytes. Nil when it is not a PNG this reader takes.
    ///
    /// - Parameters:
    ///   - header: libvips' header of the file (`open(file:)` without options).
    ///   - fileBytes: the file's size.
    public static func wholePNGBytes(header: VipsImage, fileBytes: Int) -> Int? {
        WholePNG.Shape(header).map { $0.filteredBytes + fileBytes }
    }

    /// As `wholePNGBytes(header:fileBytes:)`, once the file's own header agrees: libvips'
    /// header shows a 1, 2 or 4-bit grey PNG as 8-bit, which this reader does not take.
    public static func wholePNGBytes(file path: String, header: VipsImage, fileBytes: Int) -> Int? {
        guard let shape = WholePNG.Shape(header), WholePNG.fileAgrees(path, with: shape) else { return nil }
        return shape.filteredBytes + fileBytes
    }

    /// Decodes a PNG file whole with libdeflate: see `wholePNGBytes(header:fileBytes:)` for
    /// which, and for what it holds. The image carries `header`'s metadata (profile, EXIF,
    /// comments, resolution). Nil when the file is not one this reader takes or it found a
    /// fault: libvips' loader should read it then.
    public static func decodeWholePNG(file path: String, header: VipsImage) -> VipsImage? {
        guard let expected = WholePNG.Shape(header), let file = WholeFile.read(path, mostBytes: expected.mostFileBytes) else { return nil }
        return WholePNG.decode(file: file, expected: expected, header: header)
    }

    /// Decodes PNG bytes whole with libdeflate, as `decodeWholePNG(file:header:)` does.
    public static func decodeWholePNG(bytes: VipsBytes, header: VipsImage) -> VipsImage? {
        guard let expected = WholePNG.Shape(header), let copy = WholeFile.copy(bytes, mostBytes: expected.mostFileBytes) else { return nil }
        return WholePNG.decode(file: copy, expected: expected, header: header)
    }
}

/// The parts of the whole-PNG reader: the chunk walk, inflating and undoing the row filters.
enum WholePNG {
    /// What libvips' header says the pixels are; the file's own header must agree.
    struct Shape {
        let width: Int
        let height: Int
        let channels: Int

        /// Nil for what libvips' header already shows the reader does not take: not PNG, more
        /// than 8 bits, interlaced, a palette. (The file's own header says the rest.)
        init?(_ header: VipsImage) {
            guard header.loader?.hasPrefix("pngload") == true, header.bandFormat == .uchar,
                (1...4).contains(header.bands), header.intField("interlaced") != 1,
                !header.hasField("palette-bit-depth")
            else { return nil }
            (width, height, channels) = (header.width, header.height, header.bands)
        }

        var rowBytes: Int { width * channels }
        var filteredBytes: Int { (rowBytes + 1) * height }
        /// More than this is not a PNG of these pixels (deflate's stored blocks add 5 bytes in
        /// 64 KiB; metadata chunks, profiles included, rarely reach megabytes).
        var mostFileBytes: Int { filteredBytes + filteredBytes / 8 + 16 << 20 }
    }

    /// Takes `file` (from `WholeFile`; given back here) and returns the image, or nil.
    static func decode(file: UnsafeMutableRawBufferPointer, expected: Shape, header: VipsImage) -> VipsImage? {
        guard let compressed = gatherImageData(file, expected: expected),
            let rows = pl_map_buffer(expected.filteredBytes)
        else {
            WholeFile.release(file)
            return nil
        }
        let inflated = inflate(
            UnsafeRawBufferPointer(rebasing: file[..<compressed]),
            into: UnsafeMutableRawBufferPointer(start: rows, count: expected.filteredBytes))
        WholeFile.release(file)
        guard inflated,
            unfilter(
                rows.assumingMemoryBound(to: UInt8.self), rowBytes: expected.rowBytes,
                height: expected.height, pixelBytes: expected.channels)
        else {
            pl_unmap_buffer(rows, expected.filteredBytes)
            return nil
        }
        // The filter bytes closed up leave the buffer `height` bytes longer than the pixels.
        guard
            let image = pl_image_taking_buffer(
                rows, expected.filteredBytes,
                Int32(expected.width), Int32(expected.height), Int32(expected.channels))
        else {
            return nil
        }
        withExtendedLifetime(header) { pl_take_metadata(image, header.pointer) }
        return VipsImage(taking: image)
    }

    /// Whether the IHDR chunk of the PNG file at `path` agrees with `expected` (see `headerAgrees`).
    static func fileAgrees(_ path: String, with expected: Shape) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        // The signature, then the IHDR chunk's length and type, then its 13 bytes.
        guard let start = try? handle.read(upToCount: 8 + 8 + 13), start.count == 29 else { return false }
        return headerAgrees(Array(start.suffix(13)), with: expected)
    }

    /// Whether the 13 bytes of an IHDR chunk describe what `expected` says, in a kind this
    /// reader takes: 8 bits, grey or RGB with or without alpha, no interlacing.
    static func headerAgrees(_ ihdr: [UInt8], with expected: Shape) -> Bool {
        guard ihdr.count == 13 else { return false }
        let channels: Int? =
            switch ihdr[9] {
            case 0: 1
            case 4: 2
            case 2: 3
            case 6: 4
            default: nil
            }
        return ihdr.storedInteger(at: 0) == expected.width && ihdr.storedInteger(at: 4) == expected.height && ihdr[8] == 8
            && channels == expected.channels
            && ihdr[10] == 0 && ihdr[11] == 0 && ihdr[12] == 0
    }

    /// Walks the chunks and moves the image data (every IDAT chunk's payload, in order) to the
    /// front of `file`, one zlib stream; returns its length. Nil for anything this reader does
    /// not take: a header that disagrees with `expected`, a transparency chunk, a palette where
    /// none may be, an unknown critical chunk, a CRC that does not match, image data split by
    /// other chunks, no end chunk.
    static func gatherImageData(_ file: UnsafeMutableRawBufferPointer, expected: Shape) -> Int? {
        let signature: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
        guard file.count >= 8 + 25, file.prefix(8).elementsEqual(signature) else { return nil }
        var position = 8
        var imageData: [Range<Int>] = []
        var imageDataEnded = false
        var sawHeader = false
        while true {
            guard file.count - position >= 12 else { return nil }
            guard let length = file.storedInteger(at: position), length <= 0x7FFF_FFFF, length <= file.count - position - 12 else {
                return nil
            }
            let type = Array(file[position + 4..<position + 8])
            guard type.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) }) else { return nil }
            let name = String(decoding: type, as: UTF8.self)
            let payload = position + 8..<position + 8 + length
            let crc = libdeflate_crc32(0, file.baseAddress! + position + 4, 4 + length)
            guard let stored = file.storedInteger(at: payload.upperBound), crc == UInt32(stored) else { return nil }
            let critical = (65...90).contains(type[0])
            switch name {
            case "IHDR":
                guard !sawHeader, position == 8, length == 13, headerAgrees(Array(file[payload]), with: expected) else { return nil }
                sawHeader = true
            case "IDAT":
                guard sawHeader, !imageDataEnded else { return nil }
                imageData.append(payload)
            case "IEND":
                guard sawHeader, !imageData.isEmpty else { return nil }
                var end = 0
                for range in imageData {
                    // Ranges only move towards the front, and never past one not yet moved.
                    memmove(file.baseAddress! + end, file.baseAddress! + range.lowerBound, range.count)
                    end += range.count
                }
                return end
            case "PLTE":
                // A suggested palette for RGB; in a grey image an error libpng reports.
                guard sawHeader, expected.channels >= 3, imageData.isEmpty else { return nil }
            case "tRNS":
                return nil
            default:
                guard sawHeader, !critical else { return nil }
            }
            if !imageData.isEmpty, name != "IDAT" { imageDataEnded = true }
            position = payload.upperBound + 4
        }
    }

    /// Inflates the zlib stream into exactly `output`: false when it is damaged, shorter or
    /// longer.
    static func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let decompressor = libdeflate_alloc_decompressor() else { return false }
        defer { libdeflate_free_decompressor(decompressor) }
        var produced = 0
        let result = libdeflate_zlib_decompress(
            decompressor, input.baseAddress, input.count,
            output.baseAddress, output.count, &produced)
        return result == LIBDEFLATE_SUCCESS && produced == output.count
    }

    /// Undoes PNG's row filters in place and closes up the filter bytes, so that row `y` ends
    /// up at `y * rowBytes`: each row moves towards the front by `y + 1` bytes, over bytes
    /// already read, and the row above it (which the filters need) is already in its place.
    /// False when a row names a filter PNG does not have.
    static func unfilter(_ base: UnsafeMutablePointer<UInt8>, rowBytes: Int, height: Int, pixelBytes: Int) -> Bool {
        let zeros = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes)
        defer { zeros.deallocate() }
        zeros.initialize(repeating: 0, count: rowBytes)
        var above = UnsafePointer(zeros)
        for y in 0..<height {
            let source = UnsafePointer(base + y * (rowBytes + 1))
            let row = base + y * rowBytes
            guard unfilterRow(source, above: above, into: row, rowBytes: rowBytes, pixelBytes: pixelBytes) else { return false }
            above = UnsafePointer(row)
        }
        return true
    }

    /// Undoes the filter of one row: `source` is the filter byte then the filtered row, `above`
    /// the row above unfiltered (zeros for the first). `row` may overlap `source` at a lower
    /// address (see `unfilter`). False when the row names a filter PNG does not have.
    static func unfilterRow(
        _ source: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>,
        rowBytes: Int, pixelBytes: Int
    ) -> Bool {
        let filtered = source + 1
        switch source[0] {
        case 0:
            memmove(row, filtered, rowBytes)
        case 1:
            undoSub(filtered, into: row, count: rowBytes, pixelBytes: pixelBytes)
        case 2:
            undoUp(filtered, above: above, into: row, count: rowBytes)
        case 3:
            undoAverage(filtered, above: above, into: row, count: rowBytes, pixelBytes: pixelBytes)
        case 4:
            switch pixelBytes {
            case 3: undoPaethRGB(filtered, above: above, into: row, count: rowBytes)
            case 4: undoPaethRGBA(filtered, above: above, into: row, count: rowBytes)
            default: undoPaeth(filtered, above: above, into: row, count: rowBytes, pixelBytes: pixelBytes)
            }
        default:
            return false
        }
        return true
    }

    // Each filter reads byte i of the filtered row before it writes byte i of the row, which
    // lies at a lower address: the in-place move is safe going forwards.

    private static func undoSub(_ filtered: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>, count: Int, pixelBytes: Int) {
        for i in 0..<min(pixelBytes, count) { row[i] = filtered[i] }
        var i = pixelBytes
        while i < count {
            row[i] = filtered[i] &+ row[i - pixelBytes]
            i += 1
        }
    }

    private static func undoUp(
        _ filtered: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        for i in 0..<count { row[i] = filtered[i] &+ above[i] }
    }

    private static func undoAverage(
        _ filtered: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>, count: Int, pixelBytes: Int
    ) {
        for i in 0..<min(pixelBytes, count) { row[i] = filtered[i] &+ (above[i] >> 1) }
        var i = pixelBytes
        while i < count {
            row[i] = filtered[i] &+ UInt8(truncatingIfNeeded: (Int(row[i - pixelBytes]) + Int(above[i])) >> 1)
            i += 1
        }
    }

    /// The Paeth predictor: whichever of left, above and upper left is nearest to
    /// left + above - upper left, in that order on ties.
    @inline(__always)
    private static func paeth(_ a: Int32, _ b: Int32, _ c: Int32) -> UInt8 {
        let toA = abs(b - c), toB = abs(a - c), toC = abs(a + b - 2 * c)
        return UInt8(truncatingIfNeeded: toA <= toB && toA <= toC ? a : (toB <= toC ? b : c))
    }

    private static func undoPaeth(
        _ filtered: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>, count: Int, pixelBytes: Int
    ) {
        // With nothing to the left, the predictor is the byte above.
        for i in 0..<min(pixelBytes, count) { row[i] = filtered[i] &+ above[i] }
        var i = pixelBytes
        while i < count {
            row[i] = filtered[i] &+ paeth(Int32(row[i - pixelBytes]), Int32(above[i]), Int32(above[i - pixelBytes]))
            i += 1
        }
    }

    // Paeth takes most rows of a photograph (a large share of a run over filtered PNGs when it read
    // each byte's left neighbour back from the row just written): for RGB and RGBA the pixel to the
    // left and the one above it stay in registers, and the channels' independent chains
    // interleave.

    private static func undoPaethRGB(
        _ filtered: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        var (a0, a1, a2): (Int32, Int32, Int32) = (0, 0, 0)  // left of the first pixel: zero
        var (c0, c1, c2): (Int32, Int32, Int32) = (0, 0, 0)
        var i = 0
        while i + 3 <= count {
            let b0 = Int32(above[i]), b1 = Int32(above[i + 1]), b2 = Int32(above[i + 2])
            let x0 = filtered[i] &+ paeth(a0, b0, c0)
            let x1 = filtered[i + 1] &+ paeth(a1, b1, c1)
            let x2 = filtered[i + 2] &+ paeth(a2, b2, c2)
            row[i] = x0
            row[i + 1] = x1
            row[i + 2] = x2
            (a0, a1, a2) = (Int32(x0), Int32(x1), Int32(x2))
            (c0, c1, c2) = (b0, b1, b2)
            i += 3
        }
    }

    private static func undoPaethRGBA(
        _ filtered: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into row: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        var (a0, a1, a2, a3): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        var (c0, c1, c2, c3): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        var i = 0
        while i + 4 <= count {
            let b0 = Int32(above[i]), b1 = Int32(above[i + 1]), b2 = Int32(above[i + 2]), b3 = Int32(above[i + 3])
            let x0 = filtered[i] &+ paeth(a0, b0, c0)
            let x1 = filtered[i + 1] &+ paeth(a1, b1, c1)
            let x2 = filtered[i + 2] &+ paeth(a2, b2, c2)
            let x3 = filtered[i + 3] &+ paeth(a3, b3, c3)
            row[i] = x0
            row[i + 1] = x1
            row[i + 2] = x2
            row[i + 3] = x3
            (a0, a1, a2, a3) = (Int32(x0), Int32(x1), Int32(x2), Int32(x3))
            (c0, c1, c2, c3) = (b0, b1, b2, b3)
            i += 4
        }
    }
}
