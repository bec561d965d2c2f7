import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsGeometry

/// The extend step: borders of a colour, or of the image's own pixels.
@Suite("Extend")
struct ExtendTests: GeometrySamples {
    @Test func extendAddsABorderOfTheBackgroundColour() throws {
        // Given a 5×3 image whose pixels know their coordinates
        let image = try coordinates()

        // When it is extended by 1, 2, 3 and 4 pixels of green
        let extend = try processor(Extend.self, ["top": 1, "right": 2, "bottom": 3, "left": 4, "background": "#00ff00"])
        let result = try extend.applied(to: image)

        // Then it is 4 + 5 + 2 wide and 1 + 3 + 3 high, green around the original
        #expect(result.size == ImageSize(width: 11, height: 7))
        #expect(extend.outputSize(for: image.size) == result.size)
        for (x, y) in [(0, 0), (3, 1), (9, 1), (10, 6), (4, 0), (4, 4)] {
            #expect(try result.pixel(x: x, y: y) == [0, 255, 0], "(\(x), \(y))")
        }
        #expect(try result.pixel(x: 4, y: 1) == origin(0, 0))
        #expect(try result.pixel(x: 8, y: 3) == origin(4, 2))
    }

    @Test func extendByDefaultAddsBlackOnOneSide() throws {
        let image = try coordinates()
        let result = try processor(Extend.self, ["bottom": 2]).applied(to: image)
        #expect(result.size == ImageSize(width: 5, height: 5))
        #expect(try result.pixel(x: 2, y: 4) == [0, 0, 0])
        #expect(try result.pixel(x: 2, y: 2) == origin(2, 2))
    }

    @Test func extendWithCopyRepeatsTheEdgePixels() throws {
        let image = try coordinates()
        let result = try processor(Extend.self, ["left": 3, "top": 2, "extendWith": "copy"]).applied(to: image)
        #expect(result.size == ImageSize(width: 8, height: 5))
        for x in 0..<3 {
            #expect(try result.pixel(x: x, y: 3) == origin(0, 1))
            #expect(try result.pixel(x: x, y: 0) == origin(0, 0))
        }
        #expect(try result.pixel(x: 5, y: 0) == origin(2, 0))
    }

    @Test func extendWithRepeatTilesTheImage() throws {
        let image = try coordinates()
        let result = try processor(Extend.self, ["left": 3, "right": 2, "extendWith": "repeat"]).applied(to: image)
        #expect(result.size == ImageSize(width: 10, height: 3))
        // Left of the image, its last three columns; right of it, its first two.
        for (x, source) in [(0, 2), (1, 3), (2, 4), (8, 0), (9, 1)] {
            #expect(try result.pixel(x: x, y: 1) == origin(source, 1), "column \(x)")
        }
    }

    @Test func extendWithMirrorReflectsTheImageAtItsEdges() throws {
        let image = try coordinates()
        let result = try processor(Extend.self, ["left": 3, "bottom": 2, "extendWith": "mirror"]).applied(to: image)
        #expect(result.size == ImageSize(width: 8, height: 5))
        // The reflection starts with the edge pixel itself, as libvips makes it.
        for (x, source) in [(0, 2), (1, 1), (2, 0)] {
            #expect(try result.pixel(x: x, y: 0) == origin(source, 0), "column \(x)")
        }
        #expect(try result.pixel(x: 4, y: 3) == origin(1, 2))
        #expect(try result.pixel(x: 4, y: 4) == origin(1, 1))
    }

    @Test func translucentExtendBackgroundAddsAnAlphaBand() throws {
        // Given an opaque RGB image
        let image = try coordinates()

        // When it is extended with half-transparent red
        let result = try processor(Extend.self, ["top": 1, "background": "#ff000080"]).applied(to: image)

        // Then the border is that colour and the image is opaque
        #expect(result.bands == 4)
        #expect(try result.pixel(x: 0, y: 0) == [255, 0, 0, 128])
        #expect(try result.pixel(x: 0, y: 1) == origin(0, 0) + [255])
    }

    @Test func extendOfAGreyscaleImageUsesTheColoursLuminance() throws {
        let image = try Fixtures.solid(width: 2, height: 2, colour: [0])
        let result = try processor(Extend.self, ["left": 1, "background": "#ffffff"]).applied(to: image)
        #expect(result.bands == 1)
        #expect(try result.pixel(x: 0, y: 0) == [255])
    }

    @Test func aColourBorderOnAGreyscaleImageKeepsItsColour() throws {
        // Given a one-band mid-grey image
        let image = try Fixtures.solid(width: 2, height: 2, colour: [128])
        // When it gets a red border
        let result = try processor(Extend.self, ["left": 1, "background": "#ff0000"]).applied(to: image)
        // Then the image is colour, the border red and the grey as it was
        #expect(result.bands == 3 && result.interpretation == .sRGB)
        #expect(try result.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(try result.pixel(x: 1, y: 0) == [128, 128, 128])
    }

    @Test func extendWithNothingToAddIsAnOptionError() {
        let error = #expect(throws: OptionError.self) { try processor(Extend.self, ["top": 0, "extendWith": "copy"]) }
        #expect(error?.option == nil)
        #expect(error?.message.contains("top, right, bottom or left") == true)
        let negative = #expect(throws: OptionError.self) { try Extend(left: -1) }
        #expect(negative?.option == "left")
    }

    @Test func extendLargerThanTheRunAllowsFailsTheItem() throws {
        // Given a run that allows 100 pixels
        let image = try coordinates()
        let extend = try Extend(top: 10, bottom: 10)
        let context = ProcessingContext(input: "fixture", output: "test", originalSize: image.size, maxPixels: 100)

        // Then a 5×23 result is refused, naming the sizes
        let error = #expect(throws: ImageTooLarge.self) { try extend.process(image, context: context) }
        #expect(error?.description.contains("5×23") == true)
    }

    @Test func extendIdentifiersDifferWhenSettingsDiffer() throws {
        let identifiers = try [
            Extend(top: 1), Extend(right: 1), Extend(bottom: 1), Extend(left: 1),
            Extend(top: 1, background: [255, 255, 255]), Extend(top: 1, extendWith: .mirror), Extend(top: 1, extendWith: .copy),
        ].map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
        #expect(try Extend(top: 1, extendWith: .copy).identifier == Extend(top: 1, extendWith: .copy, background: [1, 2, 3]).identifier)
    }
}
