import PipelineKit
import TestSupport
import Testing
import Vips
import VipsCrop

@Suite("Crop")
struct CropTests {

    private func crop(_ values: [String: any Sendable]) throws -> Crop {
        try Fixtures.processor(Crop.self, values)
    }

    /// A 100×100 image whose red is x and green is y, so a pixel says where it came from.
    private func coordinates() throws -> VipsImage {
        try Fixtures.image(width: 100, height: 100, bands: 3) { x, y in [UInt8(x), UInt8(y), 0] }
    }

    // MARK: Regions

    @Test func regionCutsOutExactlyThatRectangle() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When a region is cropped
        let crop = try crop(["left": 10, "top": 20, "width": 30, "height": 40])
        let result = try crop.applied(to: image)

        // Then the result is that rectangle, corner to corner
        #expect(result.size == ImageSize(width: 30, height: 40))
        #expect(crop.outputSize(for: image.size) == result.size)
        #expect(try result.pixel(x: 0, y: 0) == [10, 20, 0])
        #expect(try result.pixel(x: 29, y: 39) == [39, 59, 0])
    }

    @Test func regionTouchingTheEdgesIsInside() throws {
        // Given a 100×100 image
        let image = try coordinates()

        // When the region ends exactly at the right and bottom edges
        let result = try crop(["left": 60, "top": 0, "width": 40, "height": 100]).applied(to: image)

        // Then it is cropped
        #expect(result.size == ImageSize(width: 40, height: 100))
        #expect(try result.pixel(x: 39, y: 99) == [99, 99, 0])
    }

    @Test func regionOutsideTheImageThrowsNamingTheRegionAndTheImageSize() throws {
        // Given a 100×100 image and a region that runs past its right edge
        let image = try coordinates()
        let crop = try crop(["left": 80, "top": 10, "width": 30, "height": 40])

        // When it is processed
        let error = #expect(throws: Crop.RegionOutsideImage.self) { try crop.applied(to: image) }

        // Then the item fails with a message naming the region and the image
        let message = error.map(String.init(describing:)) ?? ""
        #expect(message.contains("30×40"))
        #expect(message.contains("left 80, top 10"))
        #expect(message.contains("100×100"))
        // and a region past the bottom fails too
        #expect(throws: Crop.RegionOutsideImage.self) {
            try self.crop(["left": 0, "top": 90, "width": 10, "height": 11]).applied(to: image)
        }
    }

    // MARK: Windows

    @Test func windowLargerThanTheImageIsClampedToIt() throws {
        // Given a 100×100 image
        let image = try coordinates()

        // When a 500×50 window is cropped
        let crop = try crop(["width": 500, "height": 50])
        let result = try crop.applied(to: image)

        // Then the width is clamped to the image and the plan agrees
        #expect(result.size == ImageSize(width: 100, height: 50))
        #expect(crop.outputSize(for: image.size) == result.size)
    }

    @Test func windowWithOnlyAWidthKeepsTheFullHeight() throws {
        // Given a 100×100 image
        let image = try coordinates()

        // When only a width is given
        let result = try crop(["width": 40]).applied(to: image)

        // Then the window is centred and as tall as the image
        #expect(result.size == ImageSize(width: 40, height: 100))
        #expect(try result.pixel(x: 0, y: 0) == [30, 0, 0])
    }

    @Test func gravityChoosesWhichPartOfTheImageIsKept() throws {
        // Given a 200×100 image, red on the left half and blue on the right
        let image = try Fixtures.redLeftBlueRight(width: 200, height: 100)

        // When a 50×100 window is cropped at the east, the west and the centre
        let east = try crop(["width": 50, "height": 100, "gravity": "east"]).applied(to: image)
        let west = try crop(["width": 50, "height": 100, "gravity": "west"]).applied(to: image)
        let centre = try crop(["width": 50, "height": 100, "gravity": "center"]).applied(to: image)

        // Then east is blue, west is red, and the centre straddles the middle
        #expect(try east.pixel(x: 0, y: 50) == [0, 0, 255])
        #expect(try west.pixel(x: 49, y: 50) == [255, 0, 0])
        #expect(try centre.pixel(x: 24, y: 50) == [255, 0, 0])
        #expect(try centre.pixel(x: 25, y: 50) == [0, 0, 255])
    }

    @Test func compassGravitiesPlaceTheWindowAtTheirCorner() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When a 10×20 window is cropped at each corner
        let corners: [(String, [Double])] = [
            ("northwest", [0, 0, 0]), ("northeast", [90, 0, 0]),
            ("southwest", [0, 80, 0]), ("southeast", [90, 80, 0]),
            ("north", [45, 0, 0]), ("south", [45, 80, 0]),
        ]
        for (gravity, origin) in corners {
            let result = try crop(["width": 10, "height": 20, "gravity": gravity]).applied(to: image)

            // Then its top-left pixel is that corner's
            #expect(try result.pixel(x: 0, y: 0) == origin, "\(gravity)")
        }
    }

    /// Rows (or columns) of distinct values: row y is y × 10 in every band, so a pixel says which row it came from.
    private func stripes(width: Int, height: Int) throws -> VipsImage {
        try Fixtures.image(width: width, height: height, bands: 3) { x, y in [UInt8(y * 10), UInt8(x * 10), 0] }
    }

    @Test func aCentredWindowWithAnOddSpareStartsOnePixelInAsSharpDoes() throws {
        // Given a 10×11 image and a 9×10 window: one spare column and one spare row
        let image = try stripes(width: 10, height: 11)

        // When it is cropped at each gravity that centres along a side
        let cases: [(gravity: String, first: [Double])] = [
            ("centre", [10, 10, 0]), ("north", [0, 10, 0]), ("south", [10, 10, 0]),
            ("east", [10, 10, 0]), ("west", [10, 0, 0]),
        ]
        for (gravity, first) in cases {
            let result = try crop(["width": 9, "height": 10, "gravity": gravity]).applied(to: image)

            // Then the odd spare pixel is taken from the start, as sharp's (spare + 1) / 2 does
            #expect(try result.pixel(x: 0, y: 0) == first, "\(gravity)")
        }
    }

    @Test func aCentredWindowWithAnEvenSpareIsExactlyCentred() throws {
        // Given a 10×12 image and an 8×10 window: two spare columns and two spare rows
        let image = try stripes(width: 10, height: 12)

        // When it is cropped at the centre
        let result = try crop(["width": 8, "height": 10]).applied(to: image)

        // Then one spare row and column lie on each side
        #expect(try result.pixel(x: 0, y: 0) == [10, 10, 0])
    }

    @Test(arguments: ["attention", "entropy"])
    func smartGravityKeepsTheDetailedPartOverAFlatOne(_ gravity: String) throws {
        // Given a 300×100 image that is flat grey except for its detailed right third
        let image = try Fixtures.flatWithDetail(width: 300, height: 100, detailed: 200..<300)

        // When a 100×100 window is cropped with a smart gravity
        let result = try crop(["width": 100, "height": 100, "gravity": gravity]).applied(to: image)

        // Then the window holds the detail
        #expect(result.size == ImageSize(width: 100, height: 100))
        #expect(try Fixtures.isMostlyDetailed(result))
    }

    // MARK: Focal points

    @Test func aWindowAtAPointIsCentredOnItAsFarAsTheImageAllows() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When 20×20 windows are cut about (0.3, 0.6), and about a point near the corner
        let inside = try crop(["width": 20, "height": 20, "gravity": ["x": 0.3, "y": 0.6] as [String: any Sendable]]).applied(to: image)
        let corner = try crop(["width": 20, "height": 20, "gravity": ["x": 0.98, "y": 0.02] as [String: any Sendable]]).applied(to: image)

        // Then the first is centred on (30, 60), and the second stops at the image's edges
        #expect(try inside.pixel(x: 0, y: 0) == [20, 50, 0])
        #expect(try corner.pixel(x: 0, y: 0) == [80, 0, 0])
        #expect(corner.size == ImageSize(width: 20, height: 20))
    }

    @Test func aWindowAtFocusTakesTheInputsPointOrTheCentre() throws {
        // Given a window at each input's focus point
        let image = try coordinates()
        let step = try crop(["width": 20, "height": 20, "gravity": "focus"])
        #expect(step.readsFocusPoint)
        #expect(try !crop(["width": 20, "height": 20, "gravity": "north"]).readsFocusPoint)

        // When one input has a point and another has none
        let withPoint = try step.process(
            image, context: ProcessingContext(input: "in", output: "o", originalSize: image.size, focusPoint: FocusPoint(x: 0.3, y: 0.6)))
        let without = try step.process(image, context: ProcessingContext(input: "in", output: "o", originalSize: image.size))

        // Then the first window is about its point and the second about the centre
        #expect(try withPoint.pixel(x: 0, y: 0) == [20, 50, 0])
        #expect(try without.pixel(x: 0, y: 0) == [40, 40, 0])
    }

    @Test func aWindowAboutFacesNeedsADetectorAndAPointNeedsFractions() {
        let faces = #expect(throws: OptionError.self) { try crop(["width": 10, "gravity": "faces"]) }
        #expect(faces?.option == "gravity")
        #expect(faces?.message.contains("built without the Faces trait") == true)
        let outside = #expect(throws: OptionError.self) {
            try crop(["width": 10, "gravity": ["x": 1.5, "y": 0.5] as [String: any Sendable]])
        }
        #expect(outside?.option == "gravity")
    }

    // MARK: Options

    @Test func gravityWithARegionIsAnOptionErrorNamingGravity() {
        let error = #expect(throws: OptionError.self) {
            try crop(["left": 0, "top": 0, "width": 10, "height": 10, "gravity": "north"])
        }
        #expect(error?.option == "gravity")
    }

    @Test func incompleteRegionIsAnOptionErrorNamingTheMissingOption() {
        // Given regions that each lack one of left, top, width, height
        let cases: [(values: [String: any Sendable], missing: String)] = [
            (["top": 0, "width": 10, "height": 10], "left"),
            (["left": 0, "width": 10, "height": 10], "top"),
            (["left": 0, "top": 0, "height": 10], "width"),
            (["left": 0, "top": 0, "width": 10], "height"),
        ]
        for (values, missing) in cases {
            // Then each is an OptionError naming what is missing
            let error = #expect(throws: OptionError.self) { try crop(values) }
            #expect(error?.option == missing)
        }
    }

    @Test func cropWithoutASizeIsAnOptionError() {
        let error = #expect(throws: OptionError.self) { try crop(["gravity": "north"]) }
        #expect(error?.message.contains("width") == true)
        let negative = #expect(throws: OptionError.self) { try Crop(mode: .region(left: -1, top: 0, width: 1, height: 1)) }
        #expect(negative?.option == "left")
    }

    @Test func identifiersDifferWhenSettingsDiffer() throws {
        let identifiers = try [
            crop(["left": 0, "top": 0, "width": 10, "height": 10]),
            crop(["left": 1, "top": 0, "width": 10, "height": 10]),
            crop(["width": 10, "height": 10]),
            crop(["width": 10, "height": 10, "gravity": "east"]),
            crop(["width": 10]),
        ].map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
        #expect(try crop(["width": 10, "height": 10, "gravity": "center"]).identifier == identifiers[2])
        // A compass gravity is named as it was before points, so journals still match
        #expect(identifiers[3] == "crop(width:10,height:10,gravity:east)")
        let points = try [0.2, 0.8].map { x in
            try crop(["width": 10, "gravity": ["x": x, "y": 0.5] as [String: any Sendable]]).identifier
        }
        #expect(points[0] != points[1])
    }
}
