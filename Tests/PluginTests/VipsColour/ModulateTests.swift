import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

/// The modulate step: brightness, saturation and hue, measured in CIE L*a*b*.
@Suite("Modulate")
struct ModulateTests {

    @Test func modulateBrightnessMultipliesLightness() throws {
        // Given muted colours, none light enough for 1.5× to clip
        let image = try ColourTests.mutedColours()
        let before = try ColourTests.pixels(image).map { ColourTests.lab($0).l }

        // When brightness is 1.5
        let step = try Fixtures.processor(Modulate.self, ["brightness": 1.5])
        let result = try step.applied(to: image)

        // Then it is still 8-bit sRGB of the same size, and the mean L* rose by about half
        #expect(result.size == image.size && step.outputSize(for: image.size) == image.size)
        #expect(result.bands == 3 && result.bandFormat == .uchar && result.interpretation == .sRGB)
        let after = try ColourTests.pixels(result).map { ColourTests.lab($0).l }
        let ratio = ColourTests.mean(after) / ColourTests.mean(before)
        #expect(abs(ratio - 1.5) < 0.05, "mean L* went from \(ColourTests.mean(before)) to \(ColourTests.mean(after))")
    }

    @Test func modulateSaturationZeroGivesGrey() throws {
        let image = try Fixtures.redLeftBlueRight(width: 8, height: 2)
        let result = try Modulate(saturation: 0).applied(to: image)
        for pixel in try ColourTests.pixels(result) {
            #expect(pixel.max()! - pixel.min()! <= 2, "\(pixel) is not grey")
        }
        // and grey of the colour's own lightness
        let red = try result.pixel(x: 0, y: 0)
        #expect(abs(ColourTests.lab(red).l - ColourTests.lab([255, 0, 0]).l) < 1.5, "\(red)")
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
        let turned = abs(ColourTests.hue(muted) - ColourTests.hue([150, 110, 110]))
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
        #expect(abs(ColourTests.lightness(ofGrey: pixel[0]) - 1.2 * ColourTests.lightness(ofGrey: 100)) < 1, "\(pixel)")
    }

    @Test func modulateWithDefaultsLeavesTheImage() throws {
        let image = try ColourTests.mutedColours()
        let step = try Fixtures.processor(Modulate.self, [:])
        #expect(step.isIdentity)
        #expect(try ColourTests.pixels(step.applied(to: image)) == ColourTests.pixels(image))
    }
}
