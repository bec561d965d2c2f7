import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Frame bombs and broken animations: `decompress.maxFrames` and `maxPixels` count every frame
/// from the header, and a truncated animation fails by name with nothing written.
extension AnimationTests {
    /// An animated WebP of `frames` frames of one pixel each (lossless), a tenth of a second each.
    static func tinyWebPFrames(_ frames: Int) -> Data {
        func chunk(_ tag: String, _ data: [UInt8]) -> [UInt8] {
            let size = UInt32(data.count)
            return Array(tag.utf8) + withUnsafeBytes(of: size.littleEndian, Array.init) + data + (data.count % 2 == 1 ? [0] : [])
        }
        // A 1×1 lossless frame, black.
        let pixel: [UInt8] = [0x2F, 0, 0, 0, 0x10, 0x07, 0x50, 0xE4, 0x22, 0x17, 0xB9, 0xC8, 0x81, 0x88, 0xE8, 0x7F, 0]
        // At 0, 0, 1×1 (sizes less one), for 100 ms, then the frame itself.
        let frame = chunk("ANMF", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0] + chunk("VP8L", pixel))
        var body = chunk("VP8X", [0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0]) + chunk("ANIM", [0, 0, 0, 0, 0, 0])
        body.reserveCapacity(body.count + frames * frame.count)
        for _ in 0..<frames { body += frame }
        let size = UInt32(4 + body.count)
        return Data(Array("RIFF".utf8) + withUnsafeBytes(of: size.littleEndian, Array.init) + Array("WEBP".utf8) + body)
    }

    @Test func aWebPOfTenThousandFramesIsRefusedFromItsHeader() async throws {
        // Given a WebP of 10,000 frames, which libvips' own page getter takes for a still
        let bomb = Self.tinyWebPFrames(10_000)
        #expect(try VipsImage.open(data: bomb).pageCount == 10_000)
        // When it runs with the default limit
        let (directory, reports, summary) = try await run(
            [#"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#], input: bomb, name: "bomb.webp")
        // Then it is refused before decoding with its real count, rather than made as one frame
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.reason.contains("the animation has 10000 frames, more than decompress.maxFrames (1000)"), "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        // And its frames are counted from its chunks, before libvips, which takes long to count many
        let source = EncodedSource.memory(VipsBytes(bomb))
        #expect(source.walkingBytes(WebPStructure.frameCount) == 10_000)
        #expect(EncodedSource.memory(VipsBytes(Self.tinyFrames(3))).walkingBytes(WebPStructure.frameCount) == .some(nil))
    }

    @Test func aGIFOfAHundredThousandFramesIsRefusedFromItsHeader() async throws {
        // Given a GIF of 100,000 frames of one pixel (libvips counts them when it reads the
        // header, up to one past the most it loads)
        let bomb = Self.tinyFrames(100_000)
        #expect(try VipsImage.open(data: bomb).pageCount == ImageDecoder.gifFramesCounted + 1)
        #expect(GIFStructure.walk { $0 < bomb.count ? bomb[$0] : nil } == .trailer(frames: 100_000))
        // When it runs with the default limit
        let (directory, reports, summary) = try await run(
            [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#], input: bomb, name: "bomb.gif")
        // Then it is refused before decoding, naming the input, the stage and the limit
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.input == "in/bomb.gif")
        #expect(failure.stage == .decompress)
        #expect(failure.error.kind == .tooManyPixels)
        #expect(failure.reason.contains("the animation has 100000 frames, more than decompress.maxFrames (1000)"), "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        // And its memory estimate counts no frame beyond the first: it is refused, not admitted
        let definition = try PipelineDefinition(
            json: PipelineHarness.json(
                inputs: ["in/*"], outputs: [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#]),
            baseDirectory: directory.url, processors: .standard)
        let decoder = ImageDecoder(settings: definition.decompress, outputs: definition.outputs)
        let one = Self.tinyFrames(1)
        let onePath = try directory.write(one, to: "one.gif")
        let needs = try #require(decoder.memoryNeeds(of: .file(path: directory.path + "/in/bomb.gif", byteCount: Int64(bomb.count))))
        let still = try #require(decoder.memoryNeeds(of: .file(path: onePath, byteCount: Int64(one.count))))
        #expect(needs.estimate == still.estimate)
    }

    @Test func maxFramesIsTheFilesToSet() async throws {
        // Given five frames and a limit of four: refused; of five: made
        let refused = try await run(
            [#"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            input: try Self.fiveFrames("gif"), name: "anim.gif", decompress: #""maxFrames": 4"#)
        #expect(refused.2.failed == 1)
        #expect(refused.1.first?.failures.first?.reason.contains("5 frames, more than decompress.maxFrames (4)") == true)
        let made = try await run(
            [#"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            input: try Self.fiveFrames("gif"), name: "anim.gif", decompress: #""maxFrames": 5"#)
        #expect(made.2.succeeded == 1)
        // With "first" only one frame is decoded, so the limit does not apply
        let first = try await run(
            [#"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            input: try Self.fiveFrames("gif"), name: "anim.gif", decompress: #""maxFrames": 4, "animation": "first""#)
        #expect(first.2.succeeded == 1)
    }

    @Test(arguments: ["gif", "webp"])
    func maxPixelsCountsEveryFrame(input ext: String) async throws {
        // Given five frames of 40×30 (1,200 pixels each, 6,000 in all) and a limit of 5,000
        let output = #"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
        let (directory, reports, summary) = try await run(
            [output], input: try Self.fiveFrames(ext), name: "anim.\(ext)", decompress: #""maxPixels": 5000"#)
        // Then the animation is refused as a pixel bomb, naming the input
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.input == "in/anim.\(ext)")
        #expect(failure.stage == .decompress)
        #expect(failure.error.kind == .tooManyPixels)
        #expect(failure.reason.contains("× 5 frames (6000 pixels), more than decompress.maxPixels (5000)"), "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        // And its first frame alone is within the limit
        let first = try await run(
            [output], input: try Self.fiveFrames(ext), name: "anim.\(ext)", decompress: #""maxPixels": 5000, "animation": "first""#)
        #expect(first.2.succeeded == 1)
    }

    @Test func aStepThatGrowsEveryFramePastMaxPixelsTogetherFailsThatOutput() async throws {
        // Given five frames of 1,200 pixels (6,000 in all, the limit) and a border that makes each 1,320
        let (directory, reports, _) = try await run(
            [
                #"{"name": "grown", "steps": [{"extend": {"right": 4}}], "encode": {"format": "gif"}, "path": "out/{stem}-grown.gif"}"#,
                #"{"name": "same", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
            ], input: try Self.fiveFrames("gif"), name: "anim.gif", decompress: #""maxPixels": 6000"#)
        // Then that output fails in the process stage, counting every frame, and the other is made
        let report = try #require(reports.first)
        let failure = try #require(report.failures.first)
        #expect(failure.output == "grown")
        #expect(failure.stage == .process)
        #expect(failure.reason.contains("the 5 frames would be 44×150, more than the 6000 pixels"), "\(failure.reason)")
        // naming the step, as a still's failure does
        #expect(failure.step == ItemError.Step(index: 0, name: "extend"), "\(String(describing: failure.step))")
        #expect(report.written.map(\.output) == ["same"])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/anim-grown.gif"))
    }

    @Test(arguments: ["gif", "webp"])
    func aTruncatedAnimationFailsWithItsNameAndLeavesNoOutput(input ext: String) async throws {
        // Given the five frames cut off in the middle
        let cut = HostileFixtures.truncated(try Self.fiveFrames(ext), to: 0.6)
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
                #"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#,
            ], input: cut, name: "cut.\(ext)")
        // Then the input fails at decompress, by name, and nothing is written, not even in part
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.input == "in/cut.\(ext)")
        #expect(failure.stage == .decompress)
        #expect(
            failure.reason.contains(
                ext == "gif"
                    ? "the GIF is truncated: its bytes end after 2 whole frames" : "the WebP is cut short: its RIFF header declares"),
            "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty, "\(directory.allFiles())")
    }

    @Test func aGIFsBlocksAreWalkedToItsTrailerOrItsEnd() throws {
        let whole = try Self.fiveFrames("gif")
        func ending(_ data: Data) -> GIFStructure.Ending { GIFStructure.walk { $0 < data.count ? data[data.startIndex + $0] : nil } }
        #expect(ending(whole) == .trailer(frames: 5))
        #expect(ending(whole.dropLast()) == .truncated(frames: 5))
        #expect(ending(Data()) == .truncated(frames: 0))
        #expect(ending(Self.tinyFrames(3).prefix(13 + 6 + 19 + 23 + 10)) == .truncated(frames: 1))
        // A file read block by block finds the same as the bytes in memory
        let directory = try TemporaryDirectory()
        let path = try directory.write(whole.dropLast(), to: "cut.gif")
        #expect(GIFStructure.ending(of: .file(path: path, byteCount: Int64(whole.count - 1))) == .truncated(frames: 5))
        #expect(GIFStructure.ending(of: .memory(VipsBytes(whole))) == .trailer(frames: 5))
    }
}
