import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsGeometry

@Suite("Geometry")
struct GeometryTests {

    private func processor<Processor: ImageProcessing>(_ type: Processor.Type, _ values: [String: any Sendable] = [:]) throws -> Processor {
        try Fixtures.processor(type, values)
    }

    /// A `width`×`height` image whose red is 10x + 5 and green 10y + 5, so a pixel says where it came from.
    private func coordinates(width: Int = 5, height: Int = 3) throws -> VipsImage {
        try Fixtures.image(width: width, height: height, bands: 3) { x, y in [UInt8(10 * x + 5), UInt8(10 * y + 5), 100] }
    }

    private func origin(_ x: Int, _ y: Int) -> [Double] {
        [Double(10 * x + 5), Double(10 * y + 5), 100]
    }

    // MARK: Flip and flop

    @Test func flopMirrorsLeftToRight() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When it is flopped
        let result = try processor(Flop.self).applied(to: image)

        // Then each row is reversed: the left column is the original's right column
        #expect(result.size == image.size)
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(try result.pixel(x: x, y: y) == origin(4 - x, y), "(\(x), \(y))")
            }
        }
    }

    @Test func flipMirrorsTopToBottom() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When it is flipped
        let result = try processor(Flip.self).applied(to: image)

        // Then the rows are reversed: the top row is the original's bottom row
        #expect(result.size == image.size)
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(try result.pixel(x: x, y: y) == origin(x, 2 - y), "(\(x), \(y))")
            }
        }
    }

    // MARK: Rotate

    @Test(arguments: [
        (0.0, 0), (90, 90), (180, 180), (270, 270), (360, 0),
        (-90, 270), (-180, 180), (-270, 90), (450, 90), (-720, 0),
    ])
    func rotationByAMultipleOf90IsExact(_ angle: Double, _ clockwise: Int) throws {
        // Given a 5×3 image whose pixels know their coordinates
        let image = try coordinates()
        let (width, height) = (5, 3)

        // When it is rotated
        let rotate = try processor(Rotate.self, ["angle": angle])
        let result = try rotate.applied(to: image)

        // Then every pixel lands where a clockwise turn puts it, unchanged
        #expect(rotate.angle == Double(clockwise))
        #expect(result.size == rotate.outputSize(for: image.size))
        #expect(result.size == (clockwise % 180 == 0 ? image.size : ImageSize(width: height, height: width)))
        for y in 0..<height {
            for x in 0..<width {
                let (u, v) =
                    switch clockwise {
                    case 90: (height - 1 - y, x)
                    case 180: (width - 1 - x, height - 1 - y)
                    case 270: (y, width - 1 - x)
                    default: (x, y)
                    }
                #expect(try result.pixel(x: u, y: v) == origin(x, y), "(\(x), \(y)) at \(angle)°")
            }
        }
    }

    @Test func rotationBy45GrowsTheCanvasAndFillsTheCornersWithTheBackground() throws {
        // Given a 20×20 red square
        let image = try Fixtures.solid(width: 20, height: 20, colour: Fixtures.red)

        // When it is rotated by 45° onto blue
        let rotate = try processor(Rotate.self, ["angle": 45, "background": "#0000ff"])
        let result = try rotate.applied(to: image)

        // Then the canvas holds the whole diamond (20√2 ≈ 28), its corners are blue and its middle red
        #expect(result.size == ImageSize(width: 28, height: 28))
        #expect(rotate.outputSize(for: image.size) == result.size)
        #expect(result.bands == 3)
        for (x, y) in [(0, 0), (27, 0), (0, 27), (27, 27), (2, 2)] {
            #expect(try result.pixel(x: x, y: y) == [0, 0, 255], "(\(x), \(y))")
        }
        #expect(try result.pixel(x: 14, y: 14) == [255, 0, 0])
        #expect(try result.pixel(x: 14, y: 2) == [255, 0, 0])
    }

    @Test func rotationTurnsClockwise() throws {
        // Given a 60×10 bar, red on the left half and blue on the right
        let image = try Fixtures.redLeftBlueRight(width: 60, height: 10)

        // When it is rotated by 30°
        let result = try processor(Rotate.self, ["angle": 30, "background": "#00ff00"]).applied(to: image)

        // Then the blue end has turned down, not up: 25 px right of the centre, turned 30°
        // clockwise, is 21.7 px right and 12.5 px down
        let centre = (x: Double(result.width) / 2, y: Double(result.height) / 2)
        let down = try result.pixel(x: Int(centre.x + 21.7), y: Int(centre.y + 12.5))
        let up = try result.pixel(x: Int(centre.x + 21.7), y: Int(centre.y - 12.5))
        #expect(down == [0, 0, 255])
        #expect(up == [0, 255, 0])
    }

    @Test func translucentRotationBackgroundAddsAnAlphaBand() throws {
        // Given an opaque RGB square
        let image = try Fixtures.solid(width: 20, height: 20, colour: Fixtures.red)

        // When it is rotated by 45° onto a transparent background
        let result = try processor(Rotate.self, ["angle": 45, "background": "#00000000"]).applied(to: image)

        // Then it has alpha: transparent corners, an opaque red middle
        #expect(result.bands == 4)
        #expect(try result.pixel(x: 0, y: 0)[3] == 0)
        #expect(try result.pixel(x: 14, y: 14) == [255, 0, 0, 255])
    }

    @Test(arguments: [1.0, 17.5, 30, 45, 60, 89.9, 91, 135, 180.5, 271, 333, -10])
    func rotatedSizeMatchesLibvipsForAnyAngle(_ angle: Double) throws {
        let rotate = try Rotate(angle: angle)
        for (width, height) in [(1, 1), (2, 3), (37, 23), (100, 7), (640, 480)] {
            let image = try Fixtures.solid(width: width, height: height, colour: Fixtures.grey)
            #expect(try rotate.applied(to: image).size == rotate.outputSize(for: image.size), "\(width)×\(height) at \(angle)°")
        }
    }

    @Test func rotationIdentifiersIgnoreTheBackgroundOnlyWhenItCannotShow() throws {
        #expect(try Rotate(angle: -90).identifier == Rotate(angle: 270).identifier)
        #expect(try Rotate(angle: 450).identifier == Rotate(angle: 90, background: [255, 0, 0]).identifier)
        #expect(try Rotate(angle: 45).identifier != Rotate(angle: 45, background: [255, 0, 0]).identifier)
        #expect(try Rotate(angle: 45).identifier != Rotate(angle: 46).identifier)
    }

    @Test func rotateNeedsAnAngle() {
        let error = #expect(throws: OptionError.self) { try processor(Rotate.self) }
        #expect(error?.option == "angle")
        let badColour = #expect(throws: OptionError.self) { try Rotate(angle: 10, background: [0, 0]) }
        #expect(badColour?.option == "background")
    }

    // MARK: Extend

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

    // MARK: Trim

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

    // MARK: Every step

    @Test func everyStepsPlannedSizeIsTheSizeItMakes() throws {
        // Given a 37×23 image with detail
        let image = try Fixtures.flatWithDetail(width: 37, height: 23, detailed: 10..<20)

        // When each step runs
        let steps: [any ImageProcessing] = try [
            Flip(), Flop(),
            Rotate(angle: 90), Rotate(angle: 180), Rotate(angle: -90), Rotate(angle: 30), Rotate(angle: 200.5),
            Extend(top: 1, right: 2, bottom: 3, left: 4), Extend(left: 7, extendWith: .mirror),
            Trim(background: [0, 0, 0], threshold: 0),
        ]
        for step in steps {
            // Then outputSize(for:) gave the real size
            #expect(try step.applied(to: image).size == step.outputSize(for: image.size), "\(step.identifier)")
        }
    }

    // MARK: Through a pipeline file

    @Test func aPipelineFileRotatesFlopsExtendsAndSharpens() async throws {
        // Given a 40×20 PNG whose top-left quadrant is red and the rest blue
        let directory = try TemporaryDirectory()
        let corner = try Fixtures.image(width: 40, height: 20, bands: 3) { x, y in x < 20 && y < 10 ? Fixtures.red : Fixtures.blue }
        try directory.write(try corner.encoded(suffix: ".png"), to: "in/corner.png")
        let steps = """
            [{"rotate": {"angle": 90}}, {"flop": {}}, \
            {"extend": {"top": 2, "left": 3, "background": "#00ff00"}}, {"sharpen": {}}]
            """
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "turned", "steps": \#(steps), "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ])

        // When the pipeline runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)

        // Then the output is 20×40 turned, plus the border: 23×42
        #expect(summary.succeeded == 1 && summary.failed == 0)
        #expect(reports.first?.written.map(\.size) == [ImageSize(width: 23, height: 42)])
        let written = try VipsImage.open(file: directory.url.appendingPathComponent("out/corner.png").path)
        #expect(written.size == ImageSize(width: 23, height: 42))
        // and the red quadrant, turned clockwise to the top right and mirrored to the top left,
        // sits inside the green border; the rest is blue
        #expect(try written.pixel(x: 0, y: 0) == [0, 255, 0])
        #expect(try written.pixel(x: 22, y: 1) == [0, 255, 0])
        #expect(try written.pixel(x: 7, y: 10) == [255, 0, 0])
        #expect(try written.pixel(x: 18, y: 10) == [0, 0, 255])
        #expect(try written.pixel(x: 7, y: 32) == [0, 0, 255])
    }
}
