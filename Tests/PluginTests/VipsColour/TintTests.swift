import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

/// The tint step, as sharp defines it.
@Suite("Tint")
struct TintTests {
    // MARK: tint

    @Test func tintKeepsLightnessAndTakesTheTintsHue() throws {
        // Given greys from dark to light, and a pixel of colour
        let levels: [UInt8] = [60, 100, 140, 180]
        let image = try Fixtures.image(width: 5, height: 1, bands: 3) { x, _ in
            x < levels.count ? [levels[x], levels[x], levels[x]] : [40, 160, 60]
        }
        let tint: [Double] = [200, 150, 100]

        // When tinted tan
        let result = try Fixtures.processor(Tint.self, ["color": "#c89664"]).applied(to: image)

        // Then each pixel has its old lightness and the tint's hue
        #expect(result.bands == 3 && result.interpretation == .sRGB && result.bandFormat == .uchar)
        for x in 0..<5 {
            let before = try image.pixel(x: x, y: 0)
            let after = try result.pixel(x: x, y: 0)
            #expect(abs(ColourTests.lab(after).l - ColourTests.lab(before).l) < 1.5, "pixel \(x): \(before) → \(after)")
            #expect(
                abs(ColourTests.hue(after) - ColourTests.hue(tint)) < 4,
                "pixel \(x): hue \(ColourTests.hue(after)), tint \(ColourTests.hue(tint))")
        }
    }

    @Test func tintKeepsAlphaAndColoursGreyImages() throws {
        let greyAlpha = try Fixtures.solid(width: 1, height: 1, colour: [128, 60])
        let result = try Tint(color: [255, 0, 0]).applied(to: greyAlpha)
        #expect(result.bands == 4 && result.interpretation == .sRGB)
        let pixel = try result.pixel(x: 0, y: 0)
        #expect(pixel[3] == 60)
        #expect(pixel[0] > pixel[1] + 40 && pixel[0] > pixel[2] + 40, "\(pixel) is not red")
    }

    // MARK: tint, as sharp defines it (its test/unit/tint.js cases, by their defining properties)

    /// 8-bit sRGB of a CIE L*a*b* (D65) colour by the textbook formulas, each channel clipped
    /// to 0–255, and whether it was inside the sRGB gamut before clipping.
    static func sRGB(l: Double, a: Double, b: Double) -> (rgb: [Double], inGamut: Bool) {
        let fy = (l + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        func inverse(_ t: Double) -> Double { t * t * t > 216.0 / 24389 ? t * t * t : (116 * t - 16) * 27 / 24389 }
        let (x, y, z) = (0.95047 * inverse(fx), inverse(fy), 1.08883 * inverse(fz))
        let linear = [3.2406 * x - 1.5372 * y - 0.4986 * z, -0.9689 * x + 1.8758 * y + 0.0415 * z, 0.0557 * x - 0.2040 * y + 1.0570 * z]
        let encoded = linear.map { c in 255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1 / 2.4) - 0.055) }
        let inGamut = encoded.allSatisfy { (-0.5...255.5).contains($0) }
        return (encoded.map { min(255, max(0, $0)) }, inGamut)
    }

    /// The weight sharp gives the tint's chroma at lightness `l`: 1 at mid-grey, 0 at black and white.
    static func tintWeight(_ l: Double) -> Double { 1 - 4 * (l / 100 - 0.5) * (l / 100 - 0.5) }

    /// A real photo (a ladybird on a leaf: reds, greens, dark and light) at 320×240, as sharp's tests resize theirs.
    static func photo() throws -> VipsImage {
        let path = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/ladybird.jpg").path
        return try VipsImage.open(file: path).resampled(to: ImageSize(width: 320, height: 240))
    }

    /// Checks sharp's tint on every pixel: lightness kept, and a*/b* the tint's chroma weighted by
    /// lightness; where that colour is outside sRGB, the clipped colour. Returns the share of
    /// pixels in gamut.
    static func expectSharpTint(
        _ tinted: VipsImage, of original: VipsImage, tint: [Double],
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> Double {
        let before = try original.bytes(), after = try tinted.bytes()
        let (inBands, outBands) = (original.bands, tinted.bands)
        let chroma = ColourTests.lab(tint)
        var inGamut = 0, worst = (l: 0.0, ab: 0.0, clipped: 0.0)
        for index in 0..<(original.width * original.height) {
            let source = (0..<3).map { Double(before[index * inBands + (inBands < 3 ? 0 : $0)]) }
            let result = (0..<3).map { Double(after[index * outBands + $0]) }
            let l = ColourTests.lab(source).l
            let target = (l: l, a: tintWeight(l) * chroma.a, b: tintWeight(l) * chroma.b)
            let expected = sRGB(l: target.l, a: target.a, b: target.b)
            if expected.inGamut {
                inGamut += 1
                let measured = ColourTests.lab(result)
                worst.l = max(worst.l, abs(measured.l - l))
                worst.ab = max(worst.ab, abs(measured.a - target.a), abs(measured.b - target.b))
            } else {
                worst.clipped = max(worst.clipped, zip(result, expected.rgb).map { abs($0 - $1) }.max() ?? 0)
            }
        }
        #expect(worst.l < 1, "L* moved by up to \(worst.l)", sourceLocation: sourceLocation)
        #expect(worst.ab < 2.5, "a*/b* off the weighted tint by up to \(worst.ab)", sourceLocation: sourceLocation)
        #expect(
            worst.clipped <= 3, "out-of-gamut pixels off the clipped colour by up to \(worst.clipped) levels",
            sourceLocation: sourceLocation)
        return Double(inGamut) / Double(original.width * original.height)
    }

    @Test func tintRedOnAPhotoKeepsLightnessAndTakesTheWeightedChroma() throws {
        let photo = try Self.photo()
        let tinted = try Fixtures.processor(Tint.self, ["color": "#FF0000"]).applied(to: photo)
        #expect(tinted.size == photo.size && tinted.bands == 3 && tinted.bandFormat == .uchar)
        // Red's chroma, even weighted, lies outside sRGB at most lightnesses: most pixels are
        // checked against the clipped colour (which sharp's conversion clips alike).
        let inGamut = try Self.expectSharpTint(tinted, of: photo, tint: [255, 0, 0])
        #expect(inGamut > 0, "no pixel could be checked for lightness")
    }

    @Test func tintSepiaOnAPhotoKeepsLightnessAndTakesTheWeightedChroma() throws {
        let photo = try Self.photo()
        // sharp's sepia, given as hex and as RGB: the same tint
        let hex = try Fixtures.processor(Tint.self, ["color": "#704214"]).applied(to: photo)
        let rgb = try Tint(color: [112, 66, 20]).applied(to: photo)
        #expect(try hex.bytes() == rgb.bytes())
        let inGamut = try Self.expectSharpTint(hex, of: photo, tint: [112, 66, 20])
        #expect(inGamut > 0.99, "only \(inGamut) of the pixels were in gamut")
    }

    @Test func tintKeepsAlphaAsItIs() throws {
        // Given the photo with a varying alpha band
        let photo = try Self.photo()
        let alpha = try Fixtures.image(width: photo.width, height: photo.height, bands: 1) { x, y in [UInt8((x + y) % 256)] }
        let withAlpha = try photo.joiningBands(alpha)
        #expect(withAlpha.hasAlpha)

        let tinted = try Tint(color: [112, 66, 20]).applied(to: withAlpha)

        #expect(tinted.bands == 4)
        let before: [UInt8] = try withAlpha.bytes(), after: [UInt8] = try tinted.bytes()
        let pixelCount = photo.width * photo.height
        let alphaKept = (0..<pixelCount).allSatisfy { (index: Int) -> Bool in before[index * 4 + 3] == after[index * 4 + 3] }
        #expect(alphaKept, "alpha changed")
        _ = try Self.expectSharpTint(try tinted.extractingBands(0, count: 3), of: photo, tint: [112, 66, 20])
    }

    @Test func tintColoursAGreyscaleImage() throws {
        // Given greys from black to white (a greyscale image)
        let ramp = try Fixtures.image(width: 256, height: 1, bands: 1) { x, _ in [UInt8(x)] }
        let tinted = try Tint(color: [112, 66, 20]).applied(to: ramp)
        // Then it becomes sRGB: black and white stay, mid-grey takes the tint's full chroma
        #expect(tinted.bands == 3 && tinted.interpretation == .sRGB)
        #expect(Fixtures.isClose(try tinted.pixel(x: 0, y: 0), [0, 0, 0], tolerance: 1))
        #expect(Fixtures.isClose(try tinted.pixel(x: 255, y: 0), [255, 255, 255], tolerance: 1))
        _ = try Self.expectSharpTint(tinted, of: ramp, tint: [112, 66, 20])
    }
}
