import Testing
import Vips

/// Small images defined by formulas, the same as in `reference_values.py`, whose BlurHash and
/// ThumbHash the reference implementations computed.
struct PlaceholderReferenceImage: Sendable, CustomTestStringConvertible {
    let name: String
    let width: Int
    let height: Int
    /// RGBA of the pixel at (x, y).
    let formula: @Sendable (Int, Int) -> [Int]

    var testDescription: String { name }

    /// Row by row, 4 values a pixel.
    var rgba: [UInt8] {
        var values: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { values += formula(x, y).map { UInt8($0) } }
        }
        return values
    }

    /// Row by row, 3 values a pixel: the alpha dropped.
    var rgb: [UInt8] {
        var values: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { values += formula(x, y).prefix(3).map { UInt8($0) } }
        }
        return values
    }

    var isOpaque: Bool {
        // `rgba` computed once: it builds the whole image on each use.
        let values = rgba
        return stride(from: 3, to: values.count, by: 4).allSatisfy { values[$0] == 255 }
    }

    /// The image in libvips: RGB when opaque, RGBA otherwise.
    func vipsImage() throws -> VipsImage {
        isOpaque
            ? try VipsImage(pixels: rgb, width: width, height: height, bands: 3)
            : try VipsImage(pixels: rgba, width: width, height: height, bands: 4)
    }

    static let gradient4x3 = Self(name: "gradient4x3", width: 4, height: 3) { x, y in
        [40 + 60 * x, 30 + 100 * y, 200 - 40 * x - 20 * y, 255]
    }
    static let gradient32x24 = Self(name: "gradient32x24", width: 32, height: 24) { x, y in
        [x * 8, y * 10, 255 - (x + y) * 4, 255]
    }
    static let twoColours20x10 = Self(name: "twoColours20x10", width: 20, height: 10) { x, _ in
        x < 8 ? [220, 20, 60, 255] : [30, 144, 255, 255]
    }
    static let portrait12x30 = Self(name: "portrait12x30", width: 12, height: 30) { x, y in
        [(x * y * 7) % 256, (x * 20) % 256, (y * 8) % 256, 255]
    }
    static let alpha24x16 = Self(name: "alpha24x16", width: 24, height: 16) { x, y in
        [x * 10, 200, y * 15, x < 12 ? 255 : min(255, y * 17)]
    }
}
