import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

/// The greyscale step: one band of luminance, alpha kept.
@Suite("Greyscale")
struct GreyscaleTests {

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
            let expected = ColourTests.luminanceGrey(colours[index].map(Double.init))
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
        #expect(try ColourTests.pixels(gray) == ColourTests.pixels(grey))
        #expect(Grayscale().identifier == Greyscale().identifier)
    }

    @Test func greyscaleOutputEncodesAsJPEG() throws {
        let grey = try Greyscale().applied(to: try ColourTests.mutedColours())
        let decoded = try VipsImage.open(data: try grey.encoded(suffix: ".jpg"))
        #expect(decoded.bands == 1 && decoded.size == grey.size)
    }
}
