import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An animation whose EXIF says it is turned (an animated WebP from a phone) has every frame
/// turned upright, as a still is, whether or not an output keeps its frames.
@Suite struct AnimationOrientationTests {
    /// Three frames of 40×30, each its own colour with a red top row, stored turned: EXIF
    /// orientation 6, shown turned a quarter clockwise, so the red row is the right column.
    static func turnedAnimation() throws -> Data {
        let colours: [[UInt8]] = [[0, 200, 0], [0, 0, 200], [0, 200, 200]]
        let frames = try (0..<3).map { frame in
            try Fixtures.image(width: 40, height: 30, bands: 3) { _, y in y == 0 ? [255, 0, 0] : colours[frame] }
        }
        return try VipsImage.joiningPages(frames).settingFrameDelays([100, 100, 100]).settingIntField("orientation", to: 6)
            .encoded(suffix: ".webp[lossless=true]")
    }

    @Test func everyFrameOfATurnedAnimationIsTurnedUpright() async throws {
        let input = try Self.turnedAnimation()
        try #require(try VipsImage.open(data: input).orientation == 6)
        // Given outputs that keep the frames (GIF) beside a still (PNG)
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/turned.webp")
        let json = PipelineHarness.json(
            inputs: ["in/*.webp"],
            outputs: [
                #"{"name": "still", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
                #"{"name": "moving", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
            ])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then each is upright: 30 wide and 40 tall a frame, the red row the right column
        let still = try VipsImage.open(file: directory.path + "/out/turned.png")
        #expect(still.size == ImageSize(width: 30, height: 40))
        let moving = try VipsImage.open(file: directory.path + "/out/turned.gif", options: "n=-1")
        #expect(moving.width == 30 && moving.pageHeight == 40 && moving.height == 120, "\(moving.size), \(moving.pageHeight)")
        for (image, top) in [(still, 0), (moving, 0), (moving, 40), (moving, 80)] {
            #expect(try image.pixel(x: 29, y: top + 20)[0] > 200 && image.pixel(x: 0, y: top + 20)[0] < 60, "frame at \(top)")
        }
        // and the report gives the upright size
        #expect(reports.first?.originalSize == ImageSize(width: 30, height: 40))
    }
}
