import Foundation
import Testing
@testable import PipelineKit
import StandardProcessors
import TestSupport

/// `pipeline explain`: the plan from headers only, on a known folder.
@Suite struct ExplainTests {
    @Test func explainsInputsFormatsDecodeScaleAndMemory() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1000)), to: "in/a.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 800, height: 600)), to: "in/b.png")
        try directory.write(Data("junk".utf8), to: "in/c.jpg")
        let json = PipelineHarness.json(inputs: ["in/*"], outputs: [
            #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#,
        ], extra: #""inFlight": 3"#)
        let explanation = try PipelineHarness.pipeline(json, in: directory).explain()
        #expect(explanation.inputs == 3)
        #expect(explanation.formats == ["jpegload_source": 1, "pngload_source": 1])
        let jpeg = try #require(explanation.samples.first { $0.input == "in/a.jpg" })
        #expect(jpeg.size == ImageSize(width: 2000, height: 1000))
        #expect(jpeg.loadShrink == 8)
        #expect(jpeg.decodeSize == ImageSize(width: 200, height: 100))
        let png = try #require(explanation.samples.first { $0.input == "in/b.png" })
        #expect(png.loadShrink == 1 && png.decodeSize == ImageSize(width: 200, height: 150))
        #expect(explanation.samples.first { $0.input == "in/c.jpg" }?.format == nil)
        // 3 in flight × (200×150 decoded + 200×150 output) × 4 bytes
        #expect(explanation.estimatedPeakImageBytes == 3 * (30_000 + 30_000) * 4)
        #expect(explanation.text.contains("in flight: at most 3 inputs"))
        #expect(explanation.text.contains("in/a.jpg: jpegload_source 2000×1000, shrink-on-load 8, decoded at 200×100"))
        // Nothing was written: explain does not run.
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func theCommandPrintsTheExplanation() throws {
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        let result = try CommandRunner.run(["explain", file])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("inputs: 5"))
        #expect(result.standardOutput.contains("stage widths: fetch 4, cache 2, decompress 2, process 1, encode 1"))
    }
}
