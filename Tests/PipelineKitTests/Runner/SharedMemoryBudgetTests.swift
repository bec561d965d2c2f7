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

    /// A run that has started all its inputs does not end the wait of decodes that cannot stream:
    /// on a shared budget another run's large decode may come at any time, so a large progressive
    /// JPEG still waits for the one under way rather than decoding beside it.
    @Test func aFinishedRunLeavesLargeDecodesOfLaterRunsWaitingForEachOther() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "first/a.jpg")
        let progressive = try Fixtures.noise(width: 750, height: 500).resized(horizontalScale: 4, verticalScale: 4, kernel: .linear)
            .encoded(suffix: ".jpg[Q=80,interlace]")
        try directory.write(progressive, to: "later/b.jpg")
        let shared = SharedMemoryBudget(budget: nil)
        let unstreamed = shared.accountant.unstreamedDecodes
        let held = DecodeMemoryEstimate.unstreamedDecodeBytes(try VipsImage.open(data: progressive))
        let underWay: Int64 = 50_000_000
        try #require(MemoryAccountant.checksUnstreamed(fileBytes: Int64(progressive.count)))
        try #require(
            underWay + held > unstreamed.capacity && underWay + held <= unstreamed.overflowCeiling,
            "\(held) bytes held would not show the rule")

        // Given a run of the shared budget that has finished
        let first = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["first/*.jpg"], outputs: [Self.thumb]), in: directory)
        let (firstMade, _) = await first.run(try first.plan(), memory: shared).collect()
        try #require(firstMade.count == 1)

        // When another run's large decode is under way and a later run's progressive JPEG, which
        // would not fit beside it in the target, is ready to decode
        #expect(unstreamed.admitNow(underWay))
        let later = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["later/*.jpg"], outputs: [Self.thumb]), in: directory)
        let run = later.run(try later.plan(), memory: shared)
        let reports = Task { await run.collect() }

        // Then it waits for the one under way, and decodes once that has ended
        try await waitUntil("the later decode waits or decodes") {
            unstreamed.waiting > 0 || run.stageCounts()[.decompress]?.done ?? 0 > 0
        }
        #expect(unstreamed.waiting == 1, "decoded beside the large decode under way")
        unstreamed.release(underWay)
        let (made, summary) = await reports.value
        #expect(summary?.failed == 0 && made.count == 1)
        #expect(unstreamed.peakAdmitted == max(underWay, held), "two large decodes held their buffers at once")
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
