import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// libvips' GIF loader stops counting frames past 4096; the pipeline counts a GIF's frames from
/// its blocks, so that messages give the real count, and refuses one of more frames than the
/// loader decodes whatever `maxFrames` allows.
@Suite struct GIFFrameCountTests {
    @Test func aGIFOfTenThousandFramesIsRefusedWithItsRealCount() async throws {
        // Given a GIF of 10,000 frames, which libvips says has 4097
        let gif = AnimationTests.tinyFrames(10_000)
        #expect(try VipsImage.open(data: gif).pageCount == ImageDecoder.gifFramesCounted + 1)
        #expect(GIFStructure.frameCount(of: .memory(VipsBytes(gif))) == 10_000)
        // When it runs with a limit of 5000 frames, more than libvips counts
        let (directory, reports, summary) = try await AnimationTests().run(
            [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#], input: gif, name: "many.gif",
            decompress: #""maxFrames": 5000"#)
        // Then it is refused, saying how many frames it has
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.stage == .decompress)
        #expect(failure.error.kind == .tooManyPixels)
        #expect(failure.reason.contains("the animation has 10000 frames, more than decompress.maxFrames (5000)"), "\(failure.reason)")
        // And explain says the same
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            extra: #""decompress": {"maxFrames": 5000}"#)
        let text = PlanExplanation(plan: try PipelineHarness.pipeline(json, in: directory).plan(), memoryBudget: nil).text
        #expect(text.contains("animated, 10000 frames: refused, more than decompress.maxFrames (5000)"), "\(text)")
    }

    @Test func aGIFOfMoreFramesThanLibvipsDecodesIsRefusedUnderAHigherLimit() async throws {
        // Given a GIF of 5000 frames, of which libvips' loader decodes the first 4096 alone
        let gif = AnimationTests.tinyFrames(5_000)
        // When it runs with a limit above its frames
        let (directory, reports, summary) = try await AnimationTests().run(
            [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#], input: gif, name: "many.gif",
            decompress: #""maxFrames": 6000"#)
        // Then it is refused, not cut short
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.error.kind == .tooManyPixels)
        #expect(failure.reason.contains("the animation has 5000 frames, more than libvips' GIF loader decodes (4097)"), "\(failure.reason)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/many.gif"))
        // (4097 frames, which the loader reports and decodes, are not refused; 4098 are)
        #expect(ImageDecoder.frameRefusal((4097, "4097"), declared: 4097, loader: "gifload_source", maxFrames: 6000) == nil)
        #expect(ImageDecoder.frameRefusal((4098, "4098"), declared: 4097, loader: "gifload_source", maxFrames: 6000) != nil)
        // And explain says the same
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            extra: #""decompress": {"maxFrames": 6000}"#)
        let text = PlanExplanation(plan: try PipelineHarness.pipeline(json, in: directory).plan(), memoryBudget: nil).text
        #expect(text.contains("animated, 5000 frames: refused, more than libvips' GIF loader decodes (4097)"), "\(text)")
    }

    @Test func aGIFWhoseBlocksCannotBeWalkedStillSaysOver4096() {
        // A byte that begins no block after the frames: the walk cannot count them
        var bytes = AnimationTests.tinyFrames(5_000)
        bytes[bytes.count - 1] = 0x00
        let counted = ImageDecoder.frameCount(4097, loader: "gifload_source", source: .memory(VipsBytes(bytes)))
        #expect(counted.count == nil)
        #expect(counted.text == "over 4096")
        // A WebP's count is its header's
        #expect(ImageDecoder.frameCount(6000, loader: "webpload", source: .memory(VipsBytes(bytes))).text == "6000")
    }
}
