import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

@Suite("Resize at a focal point")
struct ResizeFocusPointTests {
    private func resize(_ values: [String: any Sendable]) throws -> Resize {
        try Fixtures.processor(Resize.self, values)
    }

    /// A 400×200 grey image with a 24×24 red square centred at (0.8, 0.4): (320, 80).
    private func marked() throws -> VipsImage {
        try Fixtures.image(width: 400, height: 200, bands: 3) { x, y in
            abs(x - 320) < 12 && abs(y - 80) < 12 ? [255, 0, 0] : [128, 128, 128]
        }
    }

    /// Whether the red marker is anywhere in `image`.
    private func hasMarker(_ image: VipsImage) throws -> Bool {
        let bytes = try image.bytes()
        return stride(from: 0, to: bytes.count, by: image.bands).contains { bytes[$0] > 200 && bytes[$0 + 1] < 60 }
    }

    @Test func aPointSurvivesASquareCoverCrop() throws {
        // Given an image with a marker at (0.8, 0.4)
        let image = try marked()
        let square: [String: any Sendable] = ["width": 100, "height": 100, "fit": "cover"]

        // When it is cropped to a square about that point, and about the centre
        let atPoint = try resize(square.merging(["position": ["x": 0.8, "y": 0.4] as [String: any Sendable]]) { $1 }).applied(to: image)
        let centred = try resize(square).applied(to: image)

        // Then the point's crop keeps the marker and the centre's does not
        #expect(atPoint.size == ImageSize(width: 100, height: 100))
        #expect(try hasMarker(atPoint))
        #expect(try !hasMarker(centred))
    }

    @Test func thePointIsCentredWhereTheCropAllowsAndTheWindowStaysInside() {
        // A window centred on the point where it fits
        #expect(CropPosition.origin(of: (100, 100), in: (400, 400), centredOn: (0.5, 0.25)) == (150, 50))
        // moved back inside at the edges
        #expect(CropPosition.origin(of: (100, 100), in: (200, 100), centredOn: (0.8, 0.4)) == (100, 0))
        #expect(CropPosition.origin(of: (100, 100), in: (200, 300), centredOn: (0, 1)) == (0, 200))
    }

    @Test func focusReadsTheInputsPointAndFallsBackToTheCentre() throws {
        // Given a cover crop at the input's focus point
        let image = try marked()
        let step = try resize(["width": 100, "height": 100, "fit": "cover", "position": "focus"])
        #expect(step.readsFocusPoint)
        // (A width alone keeps the aspect ratio: it crops nothing, so it reads no point.)
        #expect(try !resize(["width": 100, "position": "focus"]).readsFocusPoint)

        // When the input has a point at the marker, and when it has none
        let withPoint = try step.process(
            image, context: ProcessingContext(input: "in", output: "o", originalSize: image.size, focusPoint: FocusPoint(x: 0.8, y: 0.4)))
        let without = try step.process(image, context: ProcessingContext(input: "in", output: "o", originalSize: image.size))

        // Then the first keeps the marker and the second is the centre crop
        #expect(try hasMarker(withPoint))
        #expect(try without.bytes() == resize(["width": 100, "height": 100, "fit": "cover"]).applied(to: image).bytes())
    }

    @Test func aPointFixesTheDecodeWindow() throws {
        // A 1:1 cover at a point of a wide image keeps the window about that point
        let step = try resize(["width": 100, "height": 100, "fit": "cover", "position": ["x": 1.0, "y": 0.5] as [String: any Sendable]])
        #expect(
            step.decodeWindow(for: ImageSize(width: 4000, height: 1000))
                == DecodeWindow(left: 3000, top: 0, width: 1000, height: 1000, size: ImageSize(width: 100, height: 100)))
        // while the input's own point is not known when planning
        #expect(
            try resize(["width": 100, "height": 100, "position": "focus"]).decodeWindow(for: ImageSize(width: 4000, height: 1000)) == nil)
    }

    @Test func anIdentifierTellsPointsApartAndKeepsGravitiesAsBefore() throws {
        let a = try resize(["width": 10, "height": 10, "position": ["x": 0.8, "y": 0.4] as [String: any Sendable]])
        let b = try resize(["width": 10, "height": 10, "position": ["x": 0.2, "y": 0.4] as [String: any Sendable]])
        #expect(a.identifier != b.identifier)
        #expect(try resize(["width": 10, "height": 10, "position": "north"]).identifier.contains("position:north,"))
    }

    @Test func facesWithoutADetectorIsAnError() {
        #expect(throws: OptionError.self) { try resize(["width": 10, "height": 10, "position": "faces"]) }
    }
}
