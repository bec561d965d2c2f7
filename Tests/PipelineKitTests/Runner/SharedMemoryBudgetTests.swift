import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Runs given one `SharedMemoryBudget` draw on one account: what one holds, the others wait for.
@Suite struct SharedMemoryBudgetTests {
    static let thumb = #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#

    @Test func aRunWaitsForWhatAnotherRunOfTheSameBudgetHolds() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 640, height: 480)), to: "in/a.jpg")
        let pipeline = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb]), in: directory)
        let plan = try pipeline.plan()
        let shared = SharedMemoryBudget(budget: MemoryBudget(bytes: 320_000_000, limit: 500_000_000, source: "--max-memory"))
        let admission = try #require(shared.accountant.admission)

        // Given another run holding the whole shared budget
        #expect(admission.admitNow(admission.capacity))

        // When a run sharing it has fetched its input and asked the shared budget for memory
        let run = pipeline.run(plan, memory: shared)
        let reports = Task { await run.collect() }
        try await waitUntil("the run waits on the shared budget") { admission.waiting > 0 }
        try #require(admission.waiting == 1 && (run.stageCounts()[.fetch]?.done ?? 0) >= 1)

        // Then it waits there, not decoding, until the budget is given back
        #expect(run.stageCounts()[.decompress]?.done ?? 0 == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
        admission.release(admission.capacity)
        let (made, summary) = await reports.value
        #expect(summary?.failed == 0 && made.count == 1)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
        // And what it took, it gave back
        #expect(admission.admitNow(admission.capacity))
        admission.release(admission.capacity)
    }

    @Test func aRunWithABudgetOfItsOwnDoesNotWait() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 640, height: 480)), to: "in/a.jpg")
        let pipeline = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb]), in: directory)
        let shared = SharedMemoryBudget(budget: MemoryBudget(bytes: 320_000_000, limit: 500_000_000, source: "--max-memory"))
        let admission = try #require(shared.accountant.admission)
        #expect(admission.admitNow(admission.capacity))
        defer { admission.release(admission.capacity) }
        let (made, summary) = await pipeline.run(try pipeline.plan()).collect()
        #expect(summary?.failed == 0 && made.count == 1)
    }
}
