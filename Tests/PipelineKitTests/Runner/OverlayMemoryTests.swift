import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// An overlay is decoded whole and held for the whole run, so under a memory budget it is
/// weighed as an input is: one that could never fit fails the outputs that use it, and one that
/// fits takes its share of the budget.
@Suite struct OverlayMemoryTests {
    /// A pipeline of one photo with a plain output and one that lays `overlay` over it, its
    /// memory budget about `budget` bytes.
    func pipeline(overlay: String, budget: Int64, in directory: TemporaryDirectory) throws -> Pipeline {
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 150)), to: "in/a.jpg")
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [
                    #"{"name": "plain", "steps": [{"resize": {"width": 100}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#,
                    #"{"name": "marked", "steps": [{"composite": {"image": "\#(overlay)"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-m.jpg"}"#,
                ]), in: directory)
        // The limit that leaves `budget` for images beside what this process holds now.
        pipeline.configuration.maxMemory = 4 << 30
        let overhead = (4 << 30) - (try #require(pipeline.memoryBudget())).bytes
        pipeline.configuration.maxMemory = budget + overhead
        return pipeline
    }

    @Test func anOverlayThatCouldNeverFitFailsItsOutputsAndNotTheRun() async throws {
        // Given a GIF of a few bytes that declares a 12000×12000 canvas (576 MB decoded) as an
        // overlay, and a budget of 300 MB
        let directory = try TemporaryDirectory()
        try directory.write(WholeImageDecodeEstimateTests.gifBomb(width: 12000, height: 12000), to: "bomb.gif")
        let pipeline = try pipeline(overlay: "bomb.gif", budget: 300_000_000, in: directory)
        // When it runs
        let (reports, summary) = try await pipeline.run().collect()
        // Then the output that lays it fails as over the budget, naming it, and the other is made
        let failures = reports.flatMap(\.failures)
        #expect(failures.map(\.output) == ["marked"])
        #expect(failures.first?.reason.contains("more than the run's whole memory budget") == true, "\(failures)")
        #expect(failures.first?.reason.contains("bomb.gif") == true, "\(failures)")
        #expect(summary?.outputsWritten == 1)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/a.jpg"])
    }

    @Test func anOverlayThatFitsTakesItsShareOfTheBudget() async throws {
        // Given a 1000×1000 PNG overlay (4 MB decoded) and a budget of 300 MB
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 1000, height: 1000)), to: "logo.png")
        let pipeline = try pipeline(overlay: "logo.png", budget: 300_000_000, in: directory)
        // When it runs, then both outputs are made, and the budget held at once counts the overlay
        let (_, summary) = try await pipeline.run().collect()
        #expect(summary?.outputsWritten == 2)
        #expect((summary?.memory?.peakAdmittedBytes ?? 0) >= 1000 * 1000 * 4, "\(String(describing: summary?.memory))")
    }
}
