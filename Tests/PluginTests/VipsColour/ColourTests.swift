import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

@Suite("Colour")
struct ColourTests {

    // MARK: Measuring colour, independently of libvips

    /// CIE L*a*b* (D65) of an 8-bit sRGB colour, by the textbook formulas.
    static func lab(_ rgb: [Double]) -> (l: Double, a: Double, b: Double) {
        func linear(_ value: Double) -> Double {
            let c = value / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (r, g, b) = (linear(rgb[0]), linear(rgb[1]), linear(rgb[2]))
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }

    /// The lightness L* of a grey level.
    static func lightness(ofGrey grey: Double) -> Double { lab([grey, grey, grey]).l }

    /// The hue angle of a colour in degrees, 0–360.
    static func hue(_ rgb: [Double]) -> Double {
        let (_, a, b) = lab(rgb)
        let degrees = atan2(b, a) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// The grey level whose luminance is that of `rgb`: Y encoded with the sRGB curve.
    static func luminanceGrey(_ rgb: [Double]) -> Double {
        func linear(_ value: Double) -> Double {
            let c = value / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let y = 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
        return 255 * (y <= 0.0031308 ? 12.92 * y : 1.055 * pow(y, 1 / 2.4) - 0.055)
    }

    /// A 16×4 image of muted colours (L* about 20–50), the same every run.
    static func mutedColours() throws -> VipsImage {
        try Fixtures.image(width: 16, height: 4, bands: 3) { x, y in
            [UInt8(40 + x * 5), UInt8(30 + y * 20), UInt8(90 - x * 3)]
        }
    }

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    static func pixels(_ image: VipsImage) throws -> [[Double]] {
        var result: [[Double]] = []
        for y in 0..<image.height {
            for x in 0..<image.width { result.append(try image.pixel(x: x, y: y)) }
        }
        return result
    }

    // MARK: modulate

    @Test func modulateBrightnessMultipliesLightness() throws {
        // Given muted colours, none light enough for 1.5× to clip
        let image = try Self.mutedColours()
        let before = try Self.pixels(image).map { Self.lab($0).l }

        // When brightness is 1.5
        let step = try Fixtures.processor(Modulate.self, ["brightness": 1.5])
        let result = try step.applied(to: image)

        // Then it is still 8-bit sRGB of the same size, and the mean L* rose by about half
        #expect(result.size == image.size && step.outputSize(for: image.size) == image.size)
        #expect(result.bands == 3 && result.bandFormat == .uchar && result.interpretation == .sRGB)
        let after = try Self.pixels(result).map { Self.lab($0).l }
        let ratio = Self.mean(after) / Self.mean(before)
        #expect(abs(ratio - 1.5) < 0.05, "mean L* went from \(Self.mean(before)) to \(Self.mean(after))")
    }

    @Test func modulateSaturationZeroGivesGrey() throws {
        let image = try Fixtures.redLeftBlueRight(width: 8, height: 2)
        let result = try Modulate(saturation: 0).applied(to: image)
        for pixel in try Self.pixels(result) {
            #expect(pixel.max()! - pixel.min()! <= 2, "\(pixel) is not grey")
        }
        // and grey of the colour's own lightness
        let red = try result.pixel(x: 0, y: 0)
        #expect(abs(Self.lab(red).l - Self.lab([255, 0, 0]).l) < 1.5, "\(red)")
    }

    @Test func modulateHue180TurnsRedTowardCyan() throws {
        // Given pure red, and a muted red whose opposite hue fits in sRGB
        let image = try Fixtures.image(width: 2, height: 1, bands: 3) { x, _ in x == 0 ? Fixtures.red : [150, 110, 110] }

        // When the hue turns by 180°
        let result = try Modulate(hue: 180).applied(to: image)

        // Then red becomes cyan-ish, and the muted red's hue angle turned by 180° (pure red's
        // opposite lies outside sRGB, so clipping bends its hue)
        let red = try result.pixel(x: 0, y: 0)
        #expect(red[0] < red[1] && red[0] < red[2], "\(red) is not cyan-ish")
        let muted = try result.pixel(x: 1, y: 0)
        let turned = abs(Self.hue(muted) - Self.hue([150, 110, 110]))
        #expect(abs(turned - 180) < 5, "\(muted): hue turned by \(turned)°")
    }

    @Test func modulateGivesSharpsReferencePixels() throws {
        // sharp's own tests modulate one pixel of (153, 68, 68) and expect these results
        let image = try Fixtures.solid(width: 1, height: 1, colour: [153, 68, 68])
        let cases: [(Modulate, [Double])] = [
            (try Modulate(hue: 120), [41, 107, 57]),
            (try Modulate(brightness: 2), [255, 173, 168]),
            (try Modulate(brightness: 0.5), [97, 17, 25]),
            (try Modulate(saturation: 2), [198, 0, 43]),
            (try Modulate(saturation: 0.5), [127, 83, 81]),
            (try Modulate(lightness: 10), [182, 93, 92]),
            (try Modulate(brightness: 2, saturation: 0.5, hue: 180), [149, 209, 214]),
        ]
        for (step, expected) in cases {
            let pixel = try step.applied(to: image).pixel(x: 0, y: 0)
            #expect(Fixtures.isClose(pixel, expected, tolerance: 3), "\(step.identifier) gave \(pixel), sharp \(expected)")
        }
    }

    @Test func modulateKeepsAlphaAndGreyStaysGrey() throws {
        // Given an sRGB image with alpha, and a greyscale one with alpha
        let rgba = try Fixtures.solid(width: 2, height: 2, colour: [153, 68, 68, 77])
        let greyAlpha = try Fixtures.solid(width: 2, height: 2, colour: [100, 200])

        // When brightened
        let step = try Modulate(brightness: 1.2)
        let colour = try step.applied(to: rgba)
        let grey = try step.applied(to: greyAlpha)

        // Then alpha is as it was, and the greyscale image is still one band of grey plus alpha
        #expect(colour.bands == 4 && colour.hasAlpha && colour.interpretation == .sRGB)
        #expect(try colour.pixel(x: 0, y: 0)[3] == 77)
        #expect(grey.bands == 2 && grey.hasAlpha && grey.interpretation == .blackAndWhite && grey.bandFormat == .uchar)
        let pixel = try grey.pixel(x: 1, y: 1)
        #expect(pixel[1] == 200)
        #expect(abs(Self.lightness(ofGrey: pixel[0]) - 1.2 * Self.lightness(ofGrey: 100)) < 1, "\(pixel)")
    }

    @Test func modulateWithDefaultsLeavesTheImage() throws {
        let image = try Self.mutedColours()
        let step = try Fixtures.processor(Modulate.self, [:])
        #expect(step.isIdentity)
        #expect(try Self.pixels(step.applied(to: image)) == Self.pixels(image))
    }

    // MARK: greyscale

    @Test func greyscaleGivesOneBandOfLuminance() throws {
        // Given red, green, blue, an orange and a grey in a row
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [200, 100, 50], [128, 128, 128]]
        let image = try Fixtures.image(width: colours.count, height: 1, bands: 3) { x, _ in colours[x] }

        // When made greyscale
        let result = try Fixtures.processor(Greyscale.self, [:]).applied(to: image)

        // Then there is one 8-bit band, each the colour's luminance: grey stays as it was, and
        // red, green and the orange are within 4 of Y encoded with the sRGB curve (libvips
        // weighs linear red, green and blue 0.2, 0.7 and 0.1, close to Rec. 709's 0.2126,
        // 0.7152 and 0.0722; blue, at the smallest weight, differs most, so it is only the darkest)
        #expect(result.bands == 1 && result.bandFormat == .uchar && result.interpretation == .blackAndWhite)
        let greys = try (0..<colours.count).map { try result.pixel(x: $0, y: 0)[0] }
        for index in [0, 1, 3] {
            let expected = Self.luminanceGrey(colours[index].map(Double.init))
            #expect(abs(greys[index] - expected) <= 4, "\(colours[index]) gave \(greys[index]), luminance is \(expected)")
        }
        #expect(greys[4] == 128)
        #expect(greys[2] < greys[0] && greys[0] < greys[1], "\(greys)")
    }

    @Test func greyscaleKeepsAlphaAndGrayscaleIsTheSameStep() throws {
        let image = try Fixtures.solid(width: 2, height: 2, colour: [200, 100, 50, 90])
        let grey = try Greyscale().applied(to: image)
        let gray = try Fixtures.processor(Grayscale.self, [:]).applied(to: image)
        #expect(grey.bands == 2 && grey.hasAlpha)
        #expect(try grey.pixel(x: 0, y: 0)[1] == 90)
        #expect(try Self.pixels(gray) == Self.pixels(grey))
        #expect(Grayscale().identifier == Greyscale().identifier)
    }

    @Test func greyscaleOutputEncodesAsJPEG() throws {
        let grey = try Greyscale().applied(to: try Self.mutedColours())
        let decoded = try VipsImage.open(data: try grey.encoded(suffix: ".jpg"))
        #expect(decoded.bands == 1 && decoded.size == grey.size)
    }

    // MARK: negate

    @Test func negateInvertsColourAndKeepsAlpha() throws {
        let image = try Fixtures.solid(width: 2, height: 2, colour: [10, 20, 30, 200])
        let kept = try Fixtures.processor(Negate.self, [:]).applied(to: image)
        let inverted = try Fixtures.processor(Negate.self, ["alpha": true]).applied(to: image)
        #expect(try kept.pixel(x: 0, y: 0) == [245, 235, 225, 200])
        #expect(try inverted.pixel(x: 1, y: 1) == [245, 235, 225, 55])
        #expect(kept.interpretation == .sRGB && kept.bandFormat == .uchar)
        #expect(try Negate().applied(to: Fixtures.solid(width: 1, height: 1, colour: [10, 20, 30])).pixel(x: 0, y: 0) == [245, 235, 225])
    }

    @Test func negateOfSixteenBitsGivesEightBits() throws {
        // Given 16-bit sRGB with alpha (values × 257, as a 16-bit PNG holds them)
        let pixels: [UInt16] = Array(repeating: [10, 20, 30, 200].map { UInt16($0 * 257) }, count: 4).flatMap { $0 }
        let image = try VipsImage(pixels16: pixels, width: 2, height: 2, bands: 4).labelled(as: .rgb16)

        // When negated
        let result = try Negate().applied(to: image)

        // Then the result is 8-bit sRGB, inverted, with alpha scaled but not inverted
        #expect(result.bandFormat == .uchar && result.interpretation == .sRGB)
        #expect(Fixtures.isClose(try result.pixel(x: 0, y: 0), [245, 235, 225, 200], tolerance: 1))
    }

    // MARK: flatten

    @Test func flattenShowsTheBackgroundWhereTransparentAndDropsAlpha() throws {
        // Given transparent, opaque and half-transparent pixels
        let image = try Fixtures.image(width: 3, height: 1, bands: 4) { x, _ in
            [[200, 100, 50, 0], [200, 100, 50, 255], [200, 100, 50, 128]][x]
        }

        // When flattened over green
        let result = try Fixtures.processor(Flatten.self, ["background": "#00ff00"]).applied(to: image)

        // Then alpha is gone; transparent shows green, opaque the original, half a mix
        #expect(result.bands == 3 && !result.hasAlpha && result.bandFormat == .uchar)
        #expect(try result.pixel(x: 0, y: 0) == [0, 255, 0])
        #expect(try result.pixel(x: 1, y: 0) == [200, 100, 50])
        #expect(Fixtures.isClose(try result.pixel(x: 2, y: 0), [100, 177, 25], tolerance: 2))
    }

    @Test func flattenDefaultsToBlackKeepsGreyAndLeavesOpaqueImages() throws {
        let rgba = try Fixtures.solid(width: 1, height: 1, colour: [200, 100, 50, 0])
        #expect(try Fixtures.processor(Flatten.self, [:]).applied(to: rgba).pixel(x: 0, y: 0) == [0, 0, 0])

        let greyAlpha = try Fixtures.image(width: 2, height: 1, bands: 2) { x, _ in x == 0 ? [90, 0] : [90, 255] }
        let grey = try Flatten(background: [255, 255, 255]).applied(to: greyAlpha)
        #expect(grey.bands == 1 && grey.interpretation == .blackAndWhite)
        #expect(try grey.pixel(x: 0, y: 0) == [255] && grey.pixel(x: 1, y: 0) == [90])

        let opaque = try Self.mutedColours()
        #expect(try Self.pixels(Flatten(background: [255, 0, 0]).applied(to: opaque)) == Self.pixels(opaque))
    }

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
            #expect(abs(Self.lab(after).l - Self.lab(before).l) < 1.5, "pixel \(x): \(before) → \(after)")
            #expect(abs(Self.hue(after) - Self.hue(tint)) < 4, "pixel \(x): hue \(Self.hue(after)), tint \(Self.hue(tint))")
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
        let chroma = lab(tint)
        var inGamut = 0, worst = (l: 0.0, ab: 0.0, clipped: 0.0)
        for index in 0..<(original.width * original.height) {
            let source = (0..<3).map { Double(before[index * inBands + (inBands < 3 ? 0 : $0)]) }
            let result = (0..<3).map { Double(after[index * outBands + $0]) }
            let l = lab(source).l
            let target = (l: l, a: tintWeight(l) * chroma.a, b: tintWeight(l) * chroma.b)
            let expected = sRGB(l: target.l, a: target.a, b: target.b)
            if expected.inGamut {
                inGamut += 1
                let measured = lab(result)
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

    // MARK: gamma

    @Test func gammaAboveOneLightensMidTonesBelowOneDarkensAndBlackAndWhiteStay() throws {
        let ramp: [UInt8] = [0, 64, 128, 192, 255]
        let image = try Fixtures.image(width: 5, height: 1, bands: 2) { x, _ in [ramp[x], 33] }

        let darker = try Fixtures.processor(Gamma.self, ["gamma": 1 / 2.2]).applied(to: image)
        let lighter = try Gamma(gamma: 2.2).applied(to: image)

        for result in [darker, lighter] {
            #expect(result.bands == 2 && result.bandFormat == .uchar && result.interpretation == .blackAndWhite)
            #expect(try result.pixel(x: 0, y: 0) == [0, 33])
            #expect(try result.pixel(x: 4, y: 0) == [255, 33])
        }
        // 255 × (128 / 255) ^ 2.2 and ^ (1 / 2.2)
        #expect(abs(try darker.pixel(x: 2, y: 0)[0] - 56) <= 1)
        #expect(abs(try lighter.pixel(x: 2, y: 0)[0] - 186) <= 1)
    }

    @Test func gammaOneLeavesTheImageAndTheDefaultIsTwoPointTwo() throws {
        let image = try Self.mutedColours()
        let step = try Fixtures.processor(Gamma.self, ["gamma": 1])
        #expect(try Self.pixels(step.applied(to: image)) == Self.pixels(image))
        let standard = try Fixtures.processor(Gamma.self, [:])
        #expect(standard.gamma == 2.2)
        #expect(try Self.pixels(standard.applied(to: image)) != Self.pixels(image))
    }

    // MARK: normalise

    @Test func normaliseStretchesLowContrastToTheFullRange() throws {
        // Given greys from 100 to 150 only, with a faint colour cast
        let image = try Fixtures.image(width: 51, height: 4, bands: 3) { x, _ in
            [UInt8(100 + x), UInt8(100 + x), UInt8(min(150, 102 + x))]
        }

        // When normalised
        let result = try Fixtures.processor(Normalise.self, [:]).applied(to: image)

        // Then the darkest pixels are nearly black, the lightest nearly white, in order
        #expect(result.bands == 3 && result.interpretation == .sRGB && result.bandFormat == .uchar)
        let greens = try (0..<51).map { try result.pixel(x: $0, y: 1)[1] }
        #expect(greens.first! <= 8 && greens.last! >= 247, "\(greens)")
        #expect(zip(greens, greens.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func normaliseKeepsAlphaHonoursPercentilesAndNormalizeIsTheSameStep() throws {
        let image = try Fixtures.image(width: 51, height: 2, bands: 2) { x, _ in [UInt8(100 + x), 150] }
        let full = try Normalise(lower: 0, upper: 100).applied(to: image)
        #expect(full.bands == 2 && full.interpretation == .blackAndWhite)
        #expect(try full.pixel(x: 0, y: 0) == [0, 150] && full.pixel(x: 50, y: 1) == [255, 150])

        // A narrower window clips more pixels to black and white
        let narrow = try Normalise(lower: 20, upper: 80).applied(to: image)
        #expect(try narrow.pixel(x: 5, y: 0)[0] == 0 && narrow.pixel(x: 45, y: 0)[0] == 255)

        let american = try Fixtures.processor(Normalize.self, ["lower": 20, "upper": 80])
        #expect(american.identifier == (try Normalise(lower: 20, upper: 80)).identifier)
        #expect(try Self.pixels(american.applied(to: image)) == Self.pixels(narrow))
    }

    @Test func normaliseLeavesAFlatImage() throws {
        let image = try Fixtures.solid(width: 4, height: 4, colour: [120, 130, 140])
        #expect(try Self.pixels(Normalise().applied(to: image)) == Self.pixels(image))
    }

    // MARK: options

    @Test func optionErrorsNameTheOption() {
        func option(_ body: () throws -> Void) -> String? {
            do { try body(); return "no error" } catch let error as OptionError { return error.option } catch { return "\(error)" }
        }
        #expect(option { _ = try Modulate(brightness: -1) } == "brightness")
        #expect(option { _ = try Modulate(saturation: 101) } == "saturation")
        #expect(option { _ = try Modulate(hue: 400) } == "hue")
        #expect(option { _ = try Modulate(lightness: -101) } == "lightness")
        #expect(option { _ = try Fixtures.processor(Tint.self, [:]) } == "color")
        #expect(option { _ = try Tint(color: [300, 0, 0]) } == "color")
        #expect(option { _ = try Flatten(background: [1, 2]) } == "background")
        #expect(option { _ = try Gamma(gamma: 0.05) } == "gamma")
        #expect(option { _ = try Gamma(gamma: 11) } == "gamma")
        #expect(option { _ = try Normalise(lower: 100) } == "lower")
        #expect(option { _ = try Fixtures.processor(Normalise.self, ["lower": 60, "upper": 40]) } == "upper")
    }

    @Test func aPipelineFileRejectsBadColourOptionsByName() {
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "o", "steps": [{"modulate": {"brightnes": 2}}, {"gamma": {"gamma": 50}}, {"tint": {}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ])
        do {
            _ = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
            Issue.record("the file was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("brightnes") && text.contains("brightness"), "\(text)")
            #expect(text.contains("gamma"), "\(text)")
            #expect(text.contains("color"), "\(text)")
        }
    }

    @Test func identifiersDifferWhenSettingsDiffer() throws {
        #expect(try Modulate(brightness: 2).identifier != Modulate(saturation: 2).identifier)
        #expect(try Tint(color: [255, 0, 0]).identifier != Tint(color: [0, 0, 255]).identifier)
        #expect(try Flatten(background: [255, 255, 255]).identifier != Flatten().identifier)
        #expect(try Gamma(gamma: 2.2).identifier != Gamma(gamma: 1 / 2.2).identifier)
        #expect(Negate(alpha: true).identifier != Negate().identifier)
        #expect(try Normalise(lower: 2).identifier != Normalise().identifier)
        #expect(
            try Fixtures.processor(Flatten.self, ["background": "white"]).identifier == Flatten(background: [255, 255, 255]).identifier)
    }

    // MARK: end to end

    @Test func aPipelineFileRunsGreyscaleModulateAndNegate() async throws {
        // Given an orange PNG and an output that greys, darkens and inverts it, as JPEG
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 32, height: 24, colour: [200, 100, 50])), to: "in/orange.png")
        let steps = #"[{"greyscale": {}}, {"modulate": {"brightness": 0.5}}, {"negate": {}}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "neg", "steps": \#(steps), "encode": {"format": "jpeg", "quality": 95}, "path": "out/{stem}.jpg"}"#
            ])

        // When the pipeline runs
        let (_, summary) = try await PipelineHarness.run(json, in: directory)

        // Then the JPEG is one band of 255 − (the grey of half the orange's lightness)
        #expect(summary.succeeded == 1 && summary.failed == 0)
        let written = try Data(contentsOf: directory.url.appendingPathComponent("out/orange.jpg"))
        let image = try VipsImage.open(data: written)
        #expect(image.size == ImageSize(width: 32, height: 24) && image.bands == 1)
        let halfLightness = Self.lightness(ofGrey: Self.luminanceGrey([200, 100, 50])) / 2
        let darkGrey = (0...255).min {
            abs(Self.lightness(ofGrey: Double($0)) - halfLightness) < abs(Self.lightness(ofGrey: Double($1)) - halfLightness)
        }!
        let pixel = try image.pixel(x: 16, y: 12)
        #expect(abs(pixel[0] - (255 - Double(darkGrey))) <= 5, "\(pixel), expected about \(255 - darkGrey)")
    }
}
