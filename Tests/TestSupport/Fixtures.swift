import Foundation
import Vips

/// Test images made by libvips itself, so every fixture is a real, valid file.
package enum Fixtures {
    /// A `width`×`height` image filled with `colour` (one value per band, labelled as `image`
    /// labels them).
    package static func solid(width: Int, height: Int, colour: [UInt8] = [200, 100, 50]) throws -> VipsImage {
        let bands = colour.count
        let pixels = filled(count: width * height * bands) { buffer in
            // One pixel, then what is filled copied after itself: a few bulk copies rather than a
            // store per byte, which an unoptimized, instrumented test build makes slowly.
            guard let start = buffer.baseAddress, buffer.count >= bands else { return }
            for band in 0..<bands { start[band] = colour[band] }
            var done = bands
            while done < buffer.count {
                let copied = min(done, buffer.count - done)
                (start + done).update(from: start, count: copied)
                done += copied
            }
        }
        return try labelled(VipsImage(pixels: pixels, width: width, height: height, bands: bands))
    }

    /// An RGB image whose top-left quadrant is red and the rest blue: any rotation or mirror
    /// moves the red corner somewhere else.
    package static func redCorner(width: Int, height: Int) throws -> VipsImage {
        let pixels = filled(count: width * height * 3) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let red = x < width / 2 && y < height / 2
                    let at = (y * width + x) * 3
                    (buffer[at], buffer[at + 1], buffer[at + 2]) = red ? (255, 0, 0) : (0, 0, 255)
                }
            }
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: 3)
    }

    /// A smooth gradient with detail, a stand-in for a photograph: band by band, x across, y
    /// down, x XOR y (the detail), opaque alpha, and 0 in any further band.
    package static func gradient(width: Int, height: Int, bands: Int = 3) throws -> VipsImage {
        let across = (0..<width).map { UInt8($0 * 255 / max(1, width - 1)) }
        // The detail repeats every 256 rows.
        let detail = bands > 2 ? (0..<min(height, 256)).map { y in (0..<width).map { UInt8(($0 ^ y) & 0xff) } } : []
        return try bandByBand(width: width, height: height, bands: bands) { band, y, row in
            switch band {
            case 0: row.update(from: across, count: width)
            case 1: memset(row, Int32(y * 255 / max(1, height - 1)), width)
            case 2: row.update(from: detail[y % 256], count: width)
            case 3: memset(row, 255, width)
            default: memset(row, 0, width)
            }
        }
    }

    /// A `width`×`height` image of `bands` bands whose rows `fillRow` writes one band at a time,
    /// given the band, the row's number and its start; labelled as a decoder would label it.
    ///
    /// For images of a photograph's size: whole rows copied (or set) and the bands interleaved by
    /// libvips, where an unoptimized, sanitized build stores pixel by pixel slowly.
    package static func bandByBand(
        width: Int, height: Int, bands: Int, _ fillRow: (_ band: Int, _ y: Int, _ row: UnsafeMutablePointer<UInt8>) -> Void
    ) throws -> VipsImage {
        let planes = try (0..<bands).map { band in
            let pixels = filled(count: width * height) { buffer in
                guard let start = buffer.baseAddress else { return }
                for y in 0..<height { fillRow(band, y, start + y * width) }
            }
            return try VipsImage(pixels: pixels, width: width, height: height, bands: 1)
        }
        guard bands > 1 else { return planes[0] }
        guard let joined = try Vips.call("bandjoin", ["in": .images(planes)])["out"]?.image else {
            throw VipsError(operation: "bandjoin", message: "bandjoin gave no output image")
        }
        return try VipsImage(pixels: joined.bytes(), width: width, height: height, bands: bands)
    }

    /// Deterministic noise: detail that lossless codecs cannot squeeze.
    package static func noise(width: Int, height: Int) throws -> VipsImage {
        var state: UInt32 = 12345
        let pixels = filled(count: width * height * 3) { buffer in
            for index in buffer.indices {
                state = state &* 1_664_525 &+ 1_013_904_223
                buffer[index] = UInt8(truncatingIfNeeded: state >> 24)
            }
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: 3)
    }

    package static func jpeg(_ image: VipsImage, quality: Int = 92) throws -> Data {
        try image.encoded(suffix: ".jpg[Q=\(quality)]")
    }

    package static func png(_ image: VipsImage) throws -> Data {
        try image.encoded(suffix: ".png")
    }

    /// Whether `actual` has `expected`'s bands, each within `tolerance`: small for exact
    /// arithmetic, `lossyTolerance` after a lossy encoding.
    package static func isClose(_ actual: [Double], _ expected: [Double], tolerance: Double) -> Bool {
        actual.count == expected.count && zip(actual, expected).allSatisfy { abs($0 - $1) <= tolerance }
    }

    /// How far a colour may drift through JPEG's lossy encoding and chroma subsampling.
    package static let lossyTolerance: Double = 40

    /// An 8-bit image whose pixel at (x, y) is `colour(x, y)` (one value per band), labelled as a
    /// decoder would label it: 1–2 bands greyscale, 3–4 bands sRGB, the last band of 2 or 4 alpha.
    package static func image(width: Int, height: Int, bands: Int, colour: (Int, Int) -> [UInt8]) throws -> VipsImage {
        let pixels = filled(count: width * height * bands) { buffer in
            var at = 0
            for y in 0..<height {
                for x in 0..<width {
                    for value in colour(x, y) {
                        buffer[at] = value
                        at += 1
                    }
                }
            }
        }
        return try labelled(VipsImage(pixels: pixels, width: width, height: height, bands: bands))
    }

    /// `image` labelled as a decoder would label it: libvips labels raw 2- and 4-band memory
    /// images "multiband", which it treats as having no alpha.
    package static func labelled(_ image: VipsImage) throws -> VipsImage {
        switch image.bands {
        case 2: try image.labelled(as: .blackAndWhite)
        case 4: try image.labelled(as: .sRGB)
        default: image
        }
    }

    /// `count` bytes written in place by `fill`: test images of tens of megapixels are made
    /// without an array per pixel, which in a debug or sanitizer build takes most of a test's time.
    package static func filled(count: Int, _ fill: (inout UnsafeMutableBufferPointer<UInt8>) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.initialize(repeating: 0)
            fill(&buffer)
            initialized = count
        }
    }

    package static let red: [UInt8] = [255, 0, 0]
    package static let blue: [UInt8] = [0, 0, 255]
    package static let grey: [UInt8] = [128, 128, 128]

    /// Red on the left half, blue on the right half.
    package static func redLeftBlueRight(width: Int, height: Int) throws -> VipsImage {
        try image(width: width, height: height, bands: 3) { x, _ in x < width / 2 ? red : blue }
    }

    /// Flat grey, except for the `detailed` columns, which hold saturated, high-contrast noise:
    /// the part any smart crop should keep.
    package static func flatWithDetail(width: Int, height: Int, detailed: Range<Int>) throws -> VipsImage {
        var state: UInt32 = 12345
        return try image(width: width, height: height, bands: 3) { x, _ in
            guard detailed.contains(x) else { return grey }
            state = state &* 1_103_515_245 &+ 12345  // a fixed LCG, so the image is the same every run
            let bits = state >> 16
            return [bits & 1 == 0 ? 255 : 0, bits & 2 == 0 ? 255 : 0, bits & 4 == 0 ? 255 : 40]
        }
    }

    /// Whether most sampled pixels of `image` differ from flat grey.
    package static func isMostlyDetailed(_ image: VipsImage) throws -> Bool {
        var detailed = 0
        var samples = 0
        for y in stride(from: 0, to: image.height, by: max(1, image.height / 10)) {
            for x in stride(from: 0, to: image.width, by: max(1, image.width / 10)) {
                let pixel = try image.pixel(x: x, y: y)
                samples += 1
                if zip(pixel, grey).contains(where: { abs($0 - Double($1)) > 20 }) { detailed += 1 }
            }
        }
        return detailed * 10 >= samples * 9
    }

    /// A lossless WebP animation of 16×16 frames that opens on a clear frame, then green (0, 200,
    /// 0) twice, which WebP's encoder merges into one frame: its colour is the green seen.
    package static func animationOpeningOnAClearFrame() throws -> Data {
        let clear = [UInt8](repeating: 0, count: 16 * 16 * 4)
        let green = Array(repeating: [0, 200, 0, 255] as [UInt8], count: 16 * 16 * 2).flatMap { $0 }
        let frames = try VipsImage(pixels: clear + green, width: 16, height: 48, bands: 4)
            .settingIntField("page-height", to: 16).settingFrameDelays([100, 100, 100])
        return try frames.encoded(suffix: ".webp[lossless]")
    }
}
