import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

/// The gamma and normalise steps: tone curves and contrast stretching.
@Suite("Gamma and normalise")
struct GammaAndNormaliseTests {
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
        let image = try ColourTests.mutedColours()
        let step = try Fixtures.processor(Gamma.self, ["gamma": 1])
        #expect(try ColourTests.pixels(step.applied(to: image)) == ColourTests.pixels(image))
        let standard = try Fixtures.processor(Gamma.self, [:])
        #expect(standard.gamma == 2.2)
        #expect(try ColourTests.pixels(standard.applied(to: image)) != ColourTests.pixels(image))
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
        #expect(try ColourTests.pixels(american.applied(to: image)) == ColourTests.pixels(narrow))
    }

    @Test func normaliseStretchesWhatIsSeenAndNotTheClearSurround() throws {
        // Given a cut-out: a clear black left half, and greys from 100 to 150 on the right
        let image = try Fixtures.image(width: 102, height: 4, bands: 4) { x, _ in
            x < 51 ? [0, 0, 0, 0] : [UInt8(49 + x), UInt8(49 + x), UInt8(49 + x), 255]
        }

        // When normalised
        let result = try Normalise().applied(to: image)

        // Then the greys seen span black to white, and the surround stays clear
        let seen = try (51..<102).map { try result.pixel(x: $0, y: 2) }
        #expect(seen.first![0] <= 8 && seen.last![0] >= 247, "\(seen.map { $0[0] })")
        #expect(seen.allSatisfy { $0[3] == 255 })
        #expect(try result.pixel(x: 10, y: 2)[3] == 0)

        // And an image that shows nothing is left as it is
        let clear = try Fixtures.image(width: 8, height: 8, bands: 4) { x, _ in [UInt8(x * 30), 90, 40, 0] }
        #expect(try ColourTests.pixels(Normalise().applied(to: clear)) == ColourTests.pixels(clear))
    }

    @Test func normaliseLeavesAFlatImage() throws {
        let image = try Fixtures.solid(width: 4, height: 4, colour: [120, 130, 140])
        #expect(try ColourTests.pixels(Normalise().applied(to: image)) == ColourTests.pixels(image))
    }
}
