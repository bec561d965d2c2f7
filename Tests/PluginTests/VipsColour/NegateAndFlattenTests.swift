import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

/// The negate and flatten steps.
@Suite("Negate and flatten")
struct NegateAndFlattenTests {
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

    @Test func flattenOfAGreyImageOnAColourShowsTheColour() throws {
        // Given a grey image with a transparent pixel beside an opaque one, flattened on red
        let greyAlpha = try Fixtures.image(width: 2, height: 1, bands: 2) { x, _ in x == 0 ? [90, 0] : [90, 255] }
        let flat = try Flatten(background: [255, 0, 0]).applied(to: greyAlpha)
        // Then the transparent pixel is red and the opaque one its grey, without alpha
        #expect(flat.bands == 3 && flat.interpretation == .sRGB)
        #expect(try flat.pixel(x: 0, y: 0) == [255, 0, 0] && flat.pixel(x: 1, y: 0) == [90, 90, 90])
    }

    @Test func flattenDefaultsToBlackKeepsGreyAndLeavesOpaqueImages() throws {
        let rgba = try Fixtures.solid(width: 1, height: 1, colour: [200, 100, 50, 0])
        #expect(try Fixtures.processor(Flatten.self, [:]).applied(to: rgba).pixel(x: 0, y: 0) == [0, 0, 0])

        let greyAlpha = try Fixtures.image(width: 2, height: 1, bands: 2) { x, _ in x == 0 ? [90, 0] : [90, 255] }
        let grey = try Flatten(background: [255, 255, 255]).applied(to: greyAlpha)
        #expect(grey.bands == 1 && grey.interpretation == .blackAndWhite)
        #expect(try grey.pixel(x: 0, y: 0) == [255] && grey.pixel(x: 1, y: 0) == [90])

        let opaque = try ColourTests.mutedColours()
        #expect(try ColourTests.pixels(Flatten(background: [255, 0, 0]).applied(to: opaque)) == ColourTests.pixels(opaque))
    }
}
