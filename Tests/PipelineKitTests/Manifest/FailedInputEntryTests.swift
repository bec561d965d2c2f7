import Foundation
import Testing
import Vips

@testable import PipelineKit

/// An input or output that fails keeps its manifest entry while the files it lists are there
/// as listed: the failure leaves them on disk, and a page built from the manifest goes on
/// showing them. Once a file is gone, the entry goes too.
@Suite struct FailedInputEntryTests {
    func manifest(_ directory: TemporaryDirectory) throws -> [String: ImageManifest.Input] {
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        return Dictionary(uniqueKeysWithValues: manifest.inputs.map { ($0.source, $0) })
    }

    @Test func anInputThatFailsKeepsItsEntryUntilOneOfItsFilesIsGone() async throws {
        // Given two photos made at two widths, with placeholders, and their manifest
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 240, height: 160)), to: "in/a.jpg")
        let photo = try Fixtures.jpeg(try Fixtures.noise(width: 240, height: 160))
        try directory.write(photo, to: "in/b.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "widths": [80, 120], "formats": ["webp"], "placeholders": ["lqip"], "path": "out/{stem}-{width}.{format}"}"#
            ], extra: #""manifest": {"path": "out/manifest.json"}"#)
        let (_, first) = try await PipelineHarness.run(json, in: directory)
        #expect(first.succeeded == 2)
        let before = try #require(try manifest(directory)["in/b.jpg"])
        // When b.jpg is cut short, so that it no longer decodes
        try directory.write(photo.prefix(photo.count / 3), to: "in/b.jpg")
        let (_, failing) = try await PipelineHarness.run(json, in: directory)
        // Then the run fails it, and its entry is the one the manifest had
        #expect(failing.failed == 1 && failing.succeeded == 1)
        let kept = try manifest(directory)
        #expect(kept["in/b.jpg"] == before)
        #expect(kept["in/a.jpg"] != nil)
        // When one of its files is then removed, and it fails again
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("out/b-120.webp"))
        let (_, again) = try await PipelineHarness.run(json, in: directory)
        #expect(again.failed == 1)
        // Then it has no entry: the entry would name a file that is not there
        let dropped = try manifest(directory)
        #expect(dropped["in/b.jpg"] == nil)
        #expect(dropped["in/a.jpg"] != nil)
    }

    @Test func anOutputThatFailsKeepsItsEntryBesideTheOthersMadeAnew() async throws {
        // Given a photo with a plain output and one that crops a region of it, and their manifest
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 240, height: 160)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "plain", "steps": [{"resize": {"width": 100}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-plain.jpg"}"#,
                #"{"name": "detail", "steps": [{"crop": {"left": 150, "top": 100, "width": 60, "height": 40}}], "#
                    + #""encode": {"format": "jpeg"}, "path": "out/{stem}-detail.jpg"}"#,
            ], extra: #""manifest": {"path": "out/manifest.json"}"#)
        let (_, first) = try await PipelineHarness.run(json, in: directory)
        #expect(first.succeeded == 1)
        let before = try #require(try manifest(directory)["in/a.jpg"])
        // When the photo is replaced by a smaller one, which the region lies outside
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 120, height: 80)), to: "in/a.jpg")
        let (reports, failing) = try await PipelineHarness.run(json, in: directory)
        #expect(failing.failed == 1)
        #expect(reports.flatMap(\.failures).map(\.output) == ["detail"])
        // Then the plain output's entry is its new file's, and the crop's the old one
        let after = try #require(try manifest(directory)["in/a.jpg"])
        #expect(after.outputs["detail"] == before.outputs["detail"])
        #expect(after.outputs["plain"] != nil && after.outputs["plain"] != before.outputs["plain"])
    }
}
