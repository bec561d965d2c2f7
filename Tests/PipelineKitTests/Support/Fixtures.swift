import Foundation
import Vips

/// Test images made by libvips itself, so every fixture is a real, valid file.
enum Fixtures {
    /// A `width`×`height` RGB image filled with `colour`.
    static func solid(width: Int, height: Int, colour: [UInt8] = [200, 100, 50]) throws -> VipsImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * colour.count)
        for _ in 0..<(width * height) { pixels.append(contentsOf: colour) }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: colour.count)
    }

    /// An RGB image whose top-left quadrant is red and the rest blue: any rotation or mirror
    /// moves the red corner somewhere else.
    static func redCorner(width: Int, height: Int) throws -> VipsImage {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += (x < width / 2 && y < height / 2) ? [255, 0, 0] : [0, 0, 255]
            }
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: 3)
    }

    /// A smooth gradient with detail, a stand-in for a photograph.
    static func gradient(width: Int, height: Int, bands: Int = 3) throws -> VipsImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * bands)
        for y in 0..<height {
            for x in 0..<width {
                let values: [UInt8] = [UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)), UInt8((x ^ y) & 0xff), 255]
                pixels += values.prefix(bands)
            }
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: bands)
    }

    /// Deterministic noise: detail that lossless codecs cannot squeeze.
    static func noise(width: Int, height: Int) throws -> VipsImage {
        var state: UInt32 = 12345
        let pixels = (0..<(width * height * 3)).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: 3)
    }

    static func jpeg(_ image: VipsImage, quality: Int = 92) throws -> Data {
        try image.encoded(suffix: ".jpg[Q=\(quality)]")
    }

    static func png(_ image: VipsImage) throws -> Data {
        try image.encoded(suffix: ".png")
    }

    /// Whether `colour` is within `tolerance` of `expected` in every band (JPEG is lossy).
    static func isClose(_ colour: [Double], _ expected: [Double], tolerance: Double = 40) -> Bool {
        zip(colour, expected).allSatisfy { abs($0 - $1) <= tolerance }
    }
}
