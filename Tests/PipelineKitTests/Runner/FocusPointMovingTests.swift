import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// A step before a crop about the input's focus point that moves the picture (a flop, a turn, a
/// crop, a border, a cover or letterbox resize) moves the point with it, so the crop still keeps
/// what the point marks.
@Suite struct FocusPointMovingTests {
    /// A 400×200 grey photo with a red square 24 px wide centred at (0.8, 0.4), which the focus
    /// file marks.
    func folder() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.image(width: 400, height: 200, bands: 3) { x, y in
            abs(x - 320) < 12 && abs(y - 80) < 12 ? [255, 0, 0] : [128, 128, 128]
        }
        try directory.write(try Fixtures.png(photo), to: "in/a.png")
        try directory.write(Data(#"{"in/a.png": [0.8, 0.4]}"#.utf8), to: "focus.json")
        return directory
    }

    /// Chains of steps that each move the marker elsewhere, where a 16×16 window at the point
    /// as the file gives it would miss the marker.
    static let movingSteps: [String] = [
        #"{"flop": {}}"#,
        #"{"flip": {}}"#,
        #"{"rotate": {"angle": 90}}"#,
        #"{"rotate": {"angle": -90}}"#,
        ##"{"rotate": {"angle": 30, "background": "#808080"}}"##,
        #"{"crop": {"left": 200, "top": 0, "width": 200, "height": 200}}"#,
        #"{"crop": {"width": 200, "height": 200, "gravity": "east"}}"#,
        #"{"extend": {"left": 200}}"#,
        ##"{"resize": {"width": 400, "height": 400, "fit": "contain", "background": "#808080"}}"##,
        #"{"resize": {"width": 200, "height": 200, "fit": "cover", "position": "east"}}"#,
        #"{"flop": {}}, {"rotate": {"angle": 90}}"#,
    ]

    @Test(arguments: movingSteps)
    func theCropAfterAStepThatMovesThePictureStillKeepsThePoint(steps: String) async throws {
        // Given the marked photo, and an output whose steps move the picture before a focus crop
        let directory = try folder()
        let crop = #"{"crop": {"width": 16, "height": 16, "gravity": "focus"}}"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [#"{"name": "detail", "steps": [\#(steps), \#(crop)], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""focusPoints": "focus.json""#)

        // When it runs
        let (_, summary) = try await PipelineHarness.run(json, in: directory)

        // Then the window is centred on the marker, wherever the steps put it
        #expect(summary.succeeded == 1)
        let detail = try VipsImage.open(file: directory.path + "/out/a.png")
        #expect(detail.size == ImageSize(width: 16, height: 16))
        let centre = try detail.pixel(x: 8, y: 8)
        #expect(centre[0] > 200 && centre[1] < 60, "\(steps): \(centre)")
    }

    @Test func aPointMovesWithATurnAndACrop() throws {
        func near(_ point: FocusPoint, _ x: Double, _ y: Double) -> Bool { abs(point.x - x) < 1e-9 && abs(point.y - y) < 1e-9 }
        let point = try #require(FocusPoint(x: 0.8, y: 0.4))
        let size = ImageSize(width: 400, height: 200)
        let turned = ImageSize(width: 200, height: 400)
        #expect(near(point.turned(clockwise: 90, from: size, to: turned), 0.6, 0.8))
        #expect(near(point.turned(clockwise: -90, from: size, to: turned), 0.4, 0.2))
        #expect(near(point.turned(clockwise: 180, from: size, to: size), 0.2, 0.6))
        // and a point a crop cuts away goes to the nearest edge kept
        #expect(near(point.seen(through: PixelBox(left: 0, top: 0, width: 100, height: 100), of: size), 1, 0.8))
    }
}
