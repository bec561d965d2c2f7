import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// An embedder sets the memory limit in `Pipeline.Configuration`, as `--max-memory` does.
@Suite struct MaxMemoryConfigurationTests {
    func failure(_ reports: [ItemReport]) -> ItemFailure? { reports.first?.failures.first }

    @Test func anEmbedderSetsTheLimitInTheConfiguration() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 300)), to: "in/a.jpg")
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [#"{"name": "t", "steps": [{"resize": {"width": 100}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#]),
            in: directory)
        // A limit the process itself already exceeds leaves nothing for images: the run is
        // refused, naming the limit as the embedder set it, not by a flag its program may not have
        pipeline.configuration.maxMemory = 1
        let refusal = #expect(throws: PipelineFileError.self) { try pipeline.run() }
        #expect(
            refusal?.problems.map(\.message).first?.hasPrefix(
                "the memory limit of 0 MB from Pipeline.Configuration.maxMemory leaves nothing for images beside the ") == true,
            "\(String(describing: refusal))")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        // A limit that leaves a little: the input that cannot fit in it fails, naming the limit
        pipeline.configuration.maxMemory = MemoryBudget.overhead + 1000
        let (reports, summary) = try await pipeline.run().collect()
        let summaryMemory = try #require(summary?.memory)
        #expect(summaryMemory.budget.source == "Pipeline.Configuration.maxMemory" && summaryMemory.budget.bytes == 1000)
        #expect(failure(reports)?.reason.contains("from Pipeline.Configuration.maxMemory") == true)
        #expect(summaryMemory.peakAdmittedBytes == 0)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.error.kind == .overMemoryBudget && failure.stage == .decompress)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)

        pipeline.configuration.maxMemory = nil
        #expect(pipeline.memoryBudget()?.source != "Pipeline.Configuration.maxMemory")
    }
}
