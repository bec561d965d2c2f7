import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsGeometry

/// The trim step: a border like the top-left pixel (or a given background) removed.
@Suite("Trim")
struct TrimTests: GeometrySamples {

    /// A `width`×`height` image of `border` with a `centre`-coloured rectangle at `box`.
    private func framed(
        width: Int = 30, height: Int = 20, border: [UInt8], centre: [UInt8],
        box: (left: Int, top: Int, width: Int, height: Int) = (5, 4, 20, 10)
    ) throws -> VipsImage {
        try Fixtures.image(width: width, height: height, bands: border.count) { x, y in
            (box.left..<box.left + box.width).contains(x) && (box.top..<box.top + box.height).contains(y) ? centre : border
        }
    }

    @Test func trimRemovesAUniformBorderMatchingTheTopLeftPixel() throws {
        // Given red framed by white
        let image = try framed(border: [255, 255, 255], centre: Fixtures.red)

        // When it is trimmed without options
        let result = try processor(Trim.self).applied(to: image)

        // Then exactly the red rectangle remains
        #expect(result.size == ImageSize(width: 20, height: 10))
        #expect(try result.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(try result.pixel(x: 19, y: 9) == [255, 0, 0])
    }

    @Test func trimRemovesABorderOfAGivenBackground() throws {
        // Given red framed by near-white, with a blue speck in the top-left corner
        let image = try Fixtures.image(width: 30, height: 20, bands: 3) { x, y in
            if (x, y) == (0, 0) { return Fixtures.blue }
            return (3..<13).contains(x) && (2..<8).contains(y) ? Fixtures.red : [250, 250, 250]
        }

        // When it is trimmed against white within the default threshold of 10
        let result = try processor(Trim.self, ["background": "#ffffff"]).applied(to: image)

        // Then the red rectangle remains: the speck is noise, not content
        #expect(result.size == ImageSize(width: 10, height: 6))
        #expect(try result.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(try result.pixel(x: 9, y: 5) == [255, 0, 0])
    }

    @Test func trimKeepsABorderThatDiffersByMoreThanTheThreshold() throws {
        // Given red framed by a grey 5 away from white
        let image = try framed(border: [250, 250, 250], centre: Fixtures.red)

        // When it is trimmed against white within 2, then within 6
        let strict = try processor(Trim.self, ["background": "#ffffff", "threshold": 2]).applied(to: image)
        let loose = try processor(Trim.self, ["background": "#ffffff", "threshold": 6]).applied(to: image)

        // Then the strict trim keeps everything and the loose one removes the border
        #expect(strict.size == image.size)
        #expect(loose.size == ImageSize(width: 20, height: 10))
    }

    @Test func trimLeavesAnImageOfOneColourUnchanged() throws {
        // Given an image of one colour
        let image = try Fixtures.solid(width: 16, height: 9, colour: Fixtures.grey)

        // When it is trimmed
        let trim = try processor(Trim.self)
        let result = try trim.applied(to: image)

        // Then nothing is removed, and the planned size is the real one
        #expect(result.size == image.size)
        #expect(trim.outputSize(for: image.size) == result.size)
        #expect(try result.pixel(x: 8, y: 4) == Fixtures.grey.map(Double.init))
    }

    @Test func trimLeavesAnImageSmallerThanItsMedianWindowUnchanged() throws {
        // Given images 2 pixels high and 1 pixel wide, with a different first pixel
        for (width, height) in [(10, 2), (1, 10)] {
            let image = try Fixtures.image(width: width, height: height, bands: 3) { x, y in x + y == 0 ? Fixtures.red : Fixtures.blue }

            // When they are trimmed, they are left as they are
            let result = try processor(Trim.self).applied(to: image)
            #expect(result.size == image.size)
            #expect(try result.pixel(x: 0, y: 0) == [255, 0, 0])
        }
    }

    @Test func trimRemovesATransparentBorder() throws {
        // Given opaque red framed by transparent pixels of a colour different from the background's
        let image = try framed(border: [0, 255, 0, 0], centre: [255, 0, 0, 255])

        // When it is trimmed against transparent black
        let result = try processor(Trim.self, ["background": "#00000000"]).applied(to: image)

        // Then the opaque rectangle remains, alpha kept
        #expect(result.size == ImageSize(width: 20, height: 10))
        #expect(try result.pixel(x: 0, y: 0) == [255, 0, 0, 255])
    }

    @Test func trimOptionsAreChecked() throws {
        let threshold = #expect(throws: OptionError.self) { try Trim(threshold: -1) }
        #expect(threshold?.option == "threshold")
        let background = #expect(throws: OptionError.self) { try Trim(background: [300, 0, 0]) }
        #expect(background?.option == "background")
        #expect(try Trim().identifier != Trim(background: [255, 255, 255]).identifier)
        #expect(try Trim().identifier != Trim(threshold: 20).identifier)
    }
}
