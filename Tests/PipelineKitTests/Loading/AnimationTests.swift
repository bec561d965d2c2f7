import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `decompress.animation`: the first frame by default; every frame, resized and cropped frame
/// by frame, into WebP outputs with "keep".
@Suite struct AnimationTests {
    func run(animation: String, input ext: String) async throws -> (TemporaryDirectory, RunSummary) {
        let directory = try TemporaryDirectory()
        try directory.write(try HostileFixtures.animation(ext), to: "in/anim.\(ext)")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "w", "steps": [{"resize": {"width": 20, "height": 20, "fit": "cover"}}], "encode": {"format": "webp", "lossless": true}, "path": "out/{stem}.webp"}"#,
                #"{"name": "j", "steps": [{"resize": {"width": 20}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
            ], extra: #""decompress": {"animation": "\#(animation)"}"#)
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        return (directory, summary)
    }

    @Test(arguments: ["gif", "webp"])
    func keepMakesAnAnimatedWebPWithEveryFrameCroppedOnItsOwn(ext: String) async throws {
        let (directory, summary) = try await run(animation: "keep", input: ext)
        #expect(summary.succeeded == 1)
        let webp = try VipsImage.open(file: directory.path + "/out/anim.webp", options: "n=-1")
        #expect(webp.pageCount == 3)
        #expect(webp.pageHeight == 20)
        #expect(webp.size == ImageSize(width: 20, height: 60))
        let rendered = try webp.rendered()
        #expect(Fixtures.isClose(try rendered.pixel(x: 10, y: 10), [255, 0, 0], tolerance: 30))
        #expect(Fixtures.isClose(try rendered.pixel(x: 10, y: 30), [0, 255, 0], tolerance: 30))
        #expect(Fixtures.isClose(try rendered.pixel(x: 10, y: 50), [0, 0, 255], tolerance: 30))
        // A format without animation gets the first frame.
        let png = try VipsImage.open(file: directory.path + "/out/anim.png")
        #expect(png.size == ImageSize(width: 20, height: 15))
        #expect(Fixtures.isClose(Array(try png.rendered().pixel(x: 5, y: 5).prefix(3)), [255, 0, 0], tolerance: 30))
    }

    @Test func firstIsTheDefault() async throws {
        let (directory, _) = try await run(animation: "first", input: "gif")
        let webp = try VipsImage.open(file: directory.path + "/out/anim.webp", options: "n=-1")
        #expect(webp.pageCount == 1)
        #expect(webp.size == ImageSize(width: 20, height: 20))
    }
}
