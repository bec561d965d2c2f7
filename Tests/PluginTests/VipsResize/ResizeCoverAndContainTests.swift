import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

/// Where the resize step puts the image: which part a cover crop keeps, where contain places it.
@Suite("Resize: cover and contain")
struct ResizeCoverAndContainTests: ResizeStepMaking {
    // MARK: Cover position

    @Test func coverPositionChoosesWhichSideIsKept() throws {
        // Given a 400×200 image, red on the left half and blue on the right
        let image = try Fixtures.redLeftBlueRight(width: 400, height: 200)

        // When it is covered into 100×100 (scaled to 200×100) with east, west or centre
        let east = try resize(["width": 100, "height": 100, "position": "east"]).applied(to: image)
        let west = try resize(["width": 100, "height": 100, "position": "west"]).applied(to: image)
        let centre = try resize(["width": 100, "height": 100, "position": "center"]).applied(to: image)

        // Then east keeps blue, west keeps red, and centre straddles the middle
        #expect(east.size == ImageSize(width: 100, height: 100))
        #expect(Fixtures.isClose(try east.pixel(x: 50, y: 50), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try east.pixel(x: 95, y: 50), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try west.pixel(x: 5, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try west.pixel(x: 50, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try centre.pixel(x: 10, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try centre.pixel(x: 90, y: 50), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
    }

    @Test func coverWithAnOddSpareKeepsTheRowsSharpKeeps() throws {
        // Given a 10×11 image whose rows are distinct values (row y is y × 20)
        let odd = try Fixtures.image(width: 10, height: 11, bands: 3) { _, y in [UInt8(y * 20), 0, 0] }
        let even = try Fixtures.image(width: 10, height: 12, bands: 3) { _, y in [UInt8(y * 20), 0, 0] }

        // When each is covered into 10×10: no resampling, one or two spare rows
        let box = try resize(["width": 10, "height": 10, "fit": "cover"])
        let oddResult = try box.applied(to: odd)
        let evenResult = try box.applied(to: even)

        // Then the odd spare row is dropped from the top, as sharp does ((spare + 1) / 2), and an
        // even spare is split evenly
        #expect(oddResult.size == ImageSize(width: 10, height: 10))
        #expect(try oddResult.pixel(x: 0, y: 0) == [20, 0, 0])
        #expect(try oddResult.pixel(x: 0, y: 9) == [200, 0, 0])
        #expect(try evenResult.pixel(x: 0, y: 0) == [20, 0, 0])
        #expect(try evenResult.pixel(x: 0, y: 9) == [200, 0, 0])
    }

    @Test func coverAttentionKeepsTheDetailedPartOverAFlatOne() throws {
        // Given a 400×200 image: flat grey except for a detailed right quarter
        let image = try Fixtures.flatWithDetail(width: 400, height: 200, detailed: 300..<400)

        // When it is covered into 50×100 (scaled to 200×100) with attention
        let result = try resize(["width": 50, "height": 100, "position": "attention"]).applied(to: image)

        // Then the crop holds the detail, not the flat grey
        #expect(result.size == ImageSize(width: 50, height: 100))
        #expect(try Fixtures.isMostlyDetailed(result))
    }

    /// A sliver covered into a box scales to a huge image first, which a smart position looked
    /// at whole: gigabytes from an input far under the pixel limit. It is refused; a fixed
    /// position, which computes only its window, is not.
    @Test func aSmartCoverOfASliverScaledPastThePixelLimitIsRefused() throws {
        // Given a 3×10000 image, in a run allowing 1,000,000 pixels (scaled to 200×666667: 133 million)
        let image = try Fixtures.gradient(width: 3, height: 10000)
        let context = ProcessingContext(input: "in", output: "o", originalSize: image.size, maxPixels: 1_000_000)

        // When it is covered into 200×200 at a smart position, it is refused, naming the sizes and the limit
        for position in ["attention", "entropy"] {
            let step = try resize(["width": 200, "height": 200, "position": position])
            let error = #expect(throws: Resize.LooksTooFar.self, "\(position)") { try step.process(image, context: context) }
            #expect(error?.description.contains("3×10000 image to 200×666667") == true, "\(String(describing: error))")
            #expect(error?.description.contains("1000000 pixels decompress.maxPixels") == true)
        }
        // And at the centre it is made, as a 200×200 window of the scaled image
        let centred = try resize(["width": 200, "height": 200, "position": "centre"]).process(image, context: context)
        #expect(centred.size == ImageSize(width: 200, height: 200))
        // And an ordinary smart crop, under the limit, is made too
        let photo = try Fixtures.flatWithDetail(width: 400, height: 200, detailed: 300..<400)
        let smart = try resize(["width": 50, "height": 100, "position": "attention"]).process(photo, context: context)
        #expect(smart.size == ImageSize(width: 50, height: 100))
    }

    // MARK: Contain

    @Test func containLetterboxesOnTheBackgroundColour() throws {
        // Given a red 200×100 image
        let image = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.red)

        // When it is contained in 100×100 on green
        let result = try resize(["width": 100, "height": 100, "fit": "contain", "background": "#00ff00"]).applied(to: image)

        // Then the image (100×50) is centred and the bars above and below are green
        #expect(result.size == ImageSize(width: 100, height: 100))
        #expect(result.bands == 3)
        #expect(try result.pixel(x: 50, y: 5) == [0, 255, 0])
        #expect(try result.pixel(x: 50, y: 95) == [0, 255, 0])
        #expect(Fixtures.isClose(try result.pixel(x: 50, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
    }

    @Test func containPositionPlacesTheImageInTheBox() throws {
        // Given a red 200×100 image
        let image = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.red)

        // When it is contained in 100×100 at the north
        let result = try resize([
            "width": 100, "height": 100, "fit": "contain", "position": "north", "background": "#00ff00",
        ]).applied(to: image)

        // Then the image touches the top and the bar is below it
        #expect(Fixtures.isClose(try result.pixel(x: 50, y: 5), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(try result.pixel(x: 50, y: 60) == [0, 255, 0])
    }

    @Test func containWithATranslucentBackgroundAddsAnAlphaBand() throws {
        // Given a red RGB image without alpha
        let image = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.red)

        // When it is contained on a half-transparent blue
        let result = try resize(["width": 100, "height": 100, "fit": "contain", "background": "#0000ff80"]).applied(to: image)

        // Then the result has alpha: translucent blue bars around an opaque image
        #expect(result.bands == 4)
        #expect(result.hasAlpha)
        #expect(try result.pixel(x: 50, y: 5) == [0, 0, 255, 128])
        #expect(Fixtures.isClose(try result.pixel(x: 50, y: 50), [255, 0, 0, 255], tolerance: Fixtures.lossyTolerance))
    }
}
