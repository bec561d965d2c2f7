import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// libjxl's own debugging lines (`JXL_FAILURE`), which it prints on stderr when it decodes a
/// damaged JPEG XL, are kept off the terminal and folded into that input's reason.
@Suite struct LibjxlOutputTests {
    /// A JPEG XL from libvips' jxlsave with bytes of its compressed data changed.
    static func damagedJPEGXL() throws -> Data {
        var bytes = [UInt8](try HostileFixtures.photo("jxl", width: 64, height: 48))
        for index in stride(from: 100, to: bytes.count, by: 7) { bytes[index] ^= 0x55 }
        return Data(bytes)
    }

    @Test func aDamagedJPEGXLsLibjxlLinesStayOffStderrAndItsReasonIsGivenOnce() throws {
        // Given a damaged JPEG XL beside good inputs, decoded side by side
        let directory = try TemporaryDirectory()
        try directory.write(try Self.damagedJPEGXL(), to: "in/bad.jxl")
        for index in 0..<4 {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 64, height: 48)), to: "in/good-\(index).jpg")
        }
        try directory.write(try HostileFixtures.photo("jxl"), to: "in/good.jxl")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs
        let result = try CommandRunner.run(["run", file])
        // Then only the damaged one fails, and stderr holds none of libjxl's lines
        #expect(result.status == 1)
        #expect(result.standardOutput.contains("6 inputs, 5 succeeded, 1 failed"), "\(result.standardOutput)")
        #expect(!result.standardError.contains("JXL_"), "\(result.standardError)")
        #expect(!result.standardError.contains("lib/jxl/"), "\(result.standardError)")
        // And its one failure line gives libvips' reason with libjxl's after it, each once
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(result.standardError)")
        let failure = try #require(lines.first)
        #expect(failure.hasPrefix("failed: in/bad.jxl: decompress: "), "\(failure)")
        #expect(failure.contains("JxlDecoderProcessInput (libjxl: "), "\(failure)")
        #expect(failure.components(separatedBy: "JxlDecoderProcessInput").count == 2, "\(failure)")
    }

    @Test func explainReadingADamagedJPEGXLsHeaderKeepsLibjxlsLinesOffStderr() throws {
        // Given a JPEG XL whose header bytes are changed
        let directory = try TemporaryDirectory()
        var bytes = [UInt8](try HostileFixtures.photo("jxl", width: 64, height: 48))
        for index in stride(from: 3, to: 60, by: 3) { bytes[index] ^= 0x5A }
        try directory.write(Data(bytes), to: "in/header.jxl")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it is explained, then run
        let explained = try CommandRunner.run(["explain", file])
        let result = try CommandRunner.run(["run", file])
        // Then libjxl had something to say, in the run's reason, and neither printed its lines
        #expect(result.standardError.contains("(libjxl: "), "\(result.standardError)")
        #expect(!explained.standardError.contains("JXL_") && !explained.standardOutput.contains("JXL_"), "\(explained.standardError)")
        #expect(explained.standardOutput.contains("in/header.jxl: decompress: jxlload_source: "), "\(explained.standardOutput)")
        #expect(!result.standardError.contains("JXL_"), "\(result.standardError)")
    }

    @Test func libjxlsTraceLinesAreToldFromOthers() {
        #expect(LibjxlOutput.isLibjxlLine("./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group"))
        #expect(LibjxlOutput.isLibjxlLine("/build/libjxl-0.7.0/lib/jxl/decode.cc:1182: frame processing failed\n"))
        #expect(!LibjxlOutput.isLibjxlLine("failed: in/lib/jxl/a.jxl: decompress: it is damaged"))
        #expect(!LibjxlOutput.isLibjxlLine("(pipeline:1234): VIPS-WARNING **: 12:00:00.000: something"))
        let folded = LibjxlOutput.folding(
            [
                "./lib/jxl/modular/encoding/encoding.cc:575: JXL_FAILURE: ANS decode final state failed",
                "./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group",
                "./lib/jxl/modular/encoding/encoding.cc:575: JXL_FAILURE: ANS decode final state failed",
                "./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group",
            ], into: ItemError(.undecodable, stage: .decompress, reason: "jxlload_source: error JxlDecoderProcessInput"))
        #expect(folded.reason == "jxlload_source: error JxlDecoderProcessInput (libjxl: Error in DC group: ANS decode final state failed)")
        // Without a line from libjxl (a bare codestream that ends), the reason says what is likely
        let silent = LibjxlOutput.folding(
            [], into: ItemError(.undecodable, stage: .decompress, reason: "jxlload_source: error JxlDecoderProcessInput"))
        #expect(silent.reason == "jxlload_source: error JxlDecoderProcessInput (libjxl gave no reason: the file is cut short or damaged)")
        // A reason the file's structure gave stands alone
        let structural = ItemError(.undecodable, stage: .decompress, reason: "the JPEG XL is cut short: its jxlc box declares 900 bytes")
        #expect(LibjxlOutput.folding(["./lib/jxl/a.cc:1: JXL_FAILURE: x"], into: structural).reason == structural.reason)
    }
}
