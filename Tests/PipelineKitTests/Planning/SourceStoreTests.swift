import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The plan's file of listings: each source read back whole, twins and refusals with it (a
/// twin's files counted once), and a record that cannot be read back failing its source with a
/// message rather than the run.
@Suite struct SourceStoreTests {
    /// A photograph (`in/a.jpg`) and a symbolic link to it (`in/link.jpg`): one source by its real
    /// path, listed under two names.
    func photoAndLink(_ photo: Data) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(photo, to: "in/a.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/link.jpg", withDestinationPath: "a.jpg")
        return directory
    }

    /// One output whose path names the folder the input was found under, not the file.
    static let output = #"{"name": "t", "steps": [], "encode": {"format": "png"}, "path": "out/{dir}/photo.png"}"#

    @Test func aSourceListedThreeTimesReadsBackWithItsTwinAndItsOwnPaths() throws {
        // Given one photograph named by three inputs: by itself and by a link, with the same
        // output path, and from a glob whose {dir} gives it a path of its own
        let directory = try photoAndLink(Data("not read".utf8))
        let json = PipelineHarness.json(inputs: ["in/a.jpg", "in/link.jpg", "**/a.jpg"], outputs: [Self.output])
        // When it is planned
        let plan = try PipelineHarness.pipeline(json, in: directory).plan()
        // Then the plan holds one source with every listing, read back from its file
        #expect(plan.items.count == 1 && plan.inputCount == 3)
        let listings = try #require(plan.items.first).listings
        #expect(listings.map(\.input.displayName) == ["in/a.jpg", "in/link.jpg", "in/a.jpg"])
        #expect(listings[0].targets.map(\.plannedPath) == [directory.path + "/out/photo.png"])
        #expect(listings[1].sameAs == 0 && listings[1].targets.isEmpty)
        #expect(listings[2].sameAs == nil && listings[2].targets.map(\.plannedPath) == [directory.path + "/out/in/photo.png"])
        #expect(try #require(plan.items.first).listingsToMake.count == 2)
    }

    @Test func aSourceListedThreeTimesCountsEachFileItWritesOnce() async throws {
        // Given the photograph of the test above, listed three times, for two files
        let directory = try photoAndLink(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)))
        let json = PipelineHarness.json(
            inputs: ["in/a.jpg", "in/link.jpg", "**/a.jpg"], outputs: [Self.output], extra: #""incremental": true"#)
        // When it runs, and runs again
        let first = try await PipelineHarness.run(json, in: directory)
        let again = try await PipelineHarness.run(json, in: directory)
        // Then each listing succeeds, and each of the two files counts once, written then up to date
        #expect(first.summary.succeeded == 3 && first.summary.outputsWritten == 2 && first.summary.outputsUpToDate == 0)
        #expect(again.summary.succeeded == 3 && again.summary.outputsWritten == 0 && again.summary.outputsUpToDate == 2)
    }

    @Test func aRepeatIsTheTwinOfTheListingWhosePathsItHasWhereverThatListingIs() throws {
        // Given one photograph named by four inputs, whose {dir} gives two paths: the first and
        // the third with work of their own, the second and the fourth (through the link)
        // repeating them
        let directory = try photoAndLink(Data("not read".utf8))
        let json = PipelineHarness.json(inputs: ["in/a.jpg", "in/link.jpg", "**/a.jpg", "**/link.jpg"], outputs: [Self.output])
        // When it is planned
        let listings = try #require(try PipelineHarness.pipeline(json, in: directory).plan().items.first).listings
        // Then each repeat names the listing it repeats by its place among all of them
        #expect(listings.map(\.sameAs) == [nil, 0, nil, 2])
        #expect(listings.count == 4)
        #expect(listings.last?.targets.isEmpty == true && listings[2].targets.map(\.plannedPath) == [directory.path + "/out/in/photo.png"])
    }

    @Test func theVeryListingAgainIsOneInputMadeCountedAndListedOnce() async throws {
        // Given one photograph named by itself and matched by a glob too, with a manifest
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/a.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 40, height: 30)), to: "in/b.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/a.jpg", "in/*.jpg"],
            outputs: [#"{"name": "t", "steps": [], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then it is one input among two, reported, counted and in the manifest once
        #expect(summary.inputs == 2 && summary.succeeded == 2 && summary.outputsWritten == 2)
        #expect(reports.map(\.input.displayName).sorted() == ["in/a.jpg", "in/b.jpg"])
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        #expect(manifest.inputs.map(\.source) == ["in/a.jpg", "in/b.jpg"])
    }

    @Test func aRecordThatCannotBeReadBackFailsItsSourceWithAMessage() throws {
        // Given a plan's file whose first record is not a listing
        let directory = try TemporaryDirectory()
        let file = try SpillFile(folder: directory.path, for: "a plan")
        try file.append(Data([5, 0, 0, 0, 1, 2, 3, 4, 5]))
        let store = SourceStore(reader: try #require(file.reader()), outputs: [], laterListings: [:], inputNames: "")
        // When its source is read back
        let item = store.item(RunPlan.SourceRef(offset: 0, byteCount: -1, isRemote: false, inShard: true))
        // Then it is one refused listing that says why, and nothing is made of it
        #expect(item.listings.count == 1 && item.listingsToMake.isEmpty)
        #expect(item.listings[0].refusal?.contains("could not be read back") == true)
    }

    /// A file refused for its name, named by a glob and by its name, is one refused input.
    @Test func aRefusedFileListedTwiceByOneNameIsRefusedOnce() throws {
        let directory = try TemporaryDirectory()
        let long = PipelineHarness.longStem
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/\(long).jpg")
        let output = #"{"name": "long", "encode": {"format": "jpeg"}, "path": "out/{name}-b.jpg"}"#
        let plan = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["in/*.jpg", "in/\(long).jpg"], outputs: [output]), in: directory
        ).plan()
        #expect(plan.inputCount == 1)
        #expect(try #require(plan.items.first).listings.map { $0.refusal != nil } == [true])
    }
}
