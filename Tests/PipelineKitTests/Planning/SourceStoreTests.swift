import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The plan's file of listings: each source read back whole, twins and refusals with it (a
/// twin's files counted once), and a record that cannot be read back failing its source with a
/// message rather than the run.
@Suite struct SourceStoreTests {
    @Test func aSourceListedThreeTimesReadsBackWithItsTwinAndItsOwnPaths() throws {
        // Given one photograph named by three inputs: twice with the same output path, once
        // from a glob whose {dir} gives it a path of its own
        let directory = try TemporaryDirectory()
        _ = try directory.write(Data("not read".utf8), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/a.jpg", "in/*.jpg", "**/a.jpg"],
            outputs: [#"{"name": "t", "steps": [], "encode": {"format": "png"}, "path": "out/{dir}/{stem}.png"}"#])
        // When it is planned
        let plan = try PipelineHarness.pipeline(json, in: directory).plan()
        // Then the plan holds one source with every listing, read back from its file
        #expect(plan.items.count == 1 && plan.inputCount == 3)
        let listings = try #require(plan.items.first).listings
        #expect(listings.map(\.input.path) == Array(repeating: directory.path + "/in/a.jpg", count: 3))
        #expect(listings[0].targets.map(\.plannedPath) == [directory.path + "/out/a.png"])
        #expect(listings[1].sameAs == 0 && listings[1].targets.isEmpty)
        #expect(listings[2].sameAs == nil && listings[2].targets.map(\.plannedPath) == [directory.path + "/out/in/a.png"])
        #expect(try #require(plan.items.first).listingsToMake.count == 2)
    }

    @Test func aSourceListedThreeTimesCountsEachFileItWritesOnce() async throws {
        // Given the photograph of the test above, listed three times, for two files
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/a.jpg", "in/*.jpg", "**/a.jpg"],
            outputs: [#"{"name": "t", "steps": [], "encode": {"format": "png"}, "path": "out/{dir}/{stem}.png"}"#],
            extra: #""incremental": true"#)
        // When it runs, and runs again
        let first = try await PipelineHarness.run(json, in: directory)
        let again = try await PipelineHarness.run(json, in: directory)
        // Then each listing succeeds, and each of the two files counts once, written then up to date
        #expect(first.summary.succeeded == 3 && first.summary.outputsWritten == 2 && first.summary.outputsUpToDate == 0)
        #expect(again.summary.succeeded == 3 && again.summary.outputsWritten == 0 && again.summary.outputsUpToDate == 2)
    }

    @Test func aRepeatIsTheTwinOfTheListingWhosePathsItHasWhereverThatListingIs() throws {
        // Given one photograph named by four inputs, whose {dir} gives two paths: the first and
        // the third with work of their own, the second and the fourth repeating them
        let directory = try TemporaryDirectory()
        _ = try directory.write(Data("not read".utf8), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/a.jpg", "in/*.jpg", "**/a.jpg", "**/*.jpg"],
            outputs: [#"{"name": "t", "steps": [], "encode": {"format": "png"}, "path": "out/{dir}/{stem}.png"}"#])
        // When it is planned
        let listings = try #require(try PipelineHarness.pipeline(json, in: directory).plan().items.first).listings
        // Then each repeat names the listing it repeats by its place among all of them
        #expect(listings.map(\.sameAs) == [nil, 0, nil, 2])
        #expect(listings[3].targets.isEmpty && listings[2].targets.map(\.plannedPath) == [directory.path + "/out/in/a.png"])
    }

    @Test func aRecordThatCannotBeReadBackFailsItsSourceWithAMessage() throws {
        // Given a plan's file whose first record is not a listing
        let directory = try TemporaryDirectory()
        let file = try SpillFile(folder: directory.path, for: "a plan")
        try file.append(Data([5, 0, 0, 0, 1, 2, 3, 4, 5]))
        let store = SourceStore(reader: try #require(file.reader()), outputs: [], laterListings: [:])
        // When its source is read back
        let item = store.item(RunPlan.SourceRef(offset: 0, byteCount: -1, isRemote: false, inShard: true))
        // Then it is one refused listing that says why, and nothing is made of it
        #expect(item.listings.count == 1 && item.listingsToMake.isEmpty)
        #expect(item.listings[0].refusal?.contains("could not be read back") == true)
    }
}
