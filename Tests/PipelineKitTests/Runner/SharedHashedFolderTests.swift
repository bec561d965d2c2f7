import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Two pipeline files that write `{hash}` names into one folder give the same bytes the same
/// name: a run of one that replaces such a file leaves it while the other's journal holds it as
/// its output's latest, since the other's manifest and pages point at it.
@Suite struct SharedHashedFolderTests {
    static func json(name: String, inputs: String) -> String {
        """
        {"version": 1, "name": "\(name)", "inputs": ["\(inputs)/*.jpg"], "cache": {"directory": "cache"},
         "manifest": {"path": "\(name).json"},
         "outputs": [{"name": "t", "steps": [{"resize": {"width": 40}}], "encode": {"format": "webp"}, "path": "out/{stem}-{hash}.webp"}]}
        """
    }

    static func files(_ directory: TemporaryDirectory) -> Set<String> {
        Set(directory.allFiles().filter { $0.hasPrefix("out/") })
    }

    @Test func aFileAnotherPipelineStillNamesIsNotRemoved() async throws {
        // Given one photo in the inputs of two pipeline files, both made: one shared file
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80))
        try directory.write(photo, to: "one/x.jpg")
        try directory.write(photo, to: "two/x.jpg")
        let (one, two) = (Self.json(name: "one", inputs: "one"), Self.json(name: "two", inputs: "two"))
        _ = try await PipelineHarness.run(one, in: directory)
        _ = try await PipelineHarness.run(two, in: directory)
        let shared = Self.files(directory)
        #expect(shared.count == 1)
        // When the second's photo changes and it runs again
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 120, height: 80)), to: "two/x.jpg")
        let (_, changed) = try await PipelineHarness.run(two, in: directory)
        #expect(changed.outputsWritten == 1)
        // Then its new file is there beside the one the first pipeline's manifest names
        let both = Self.files(directory)
        #expect(both.count == 2 && both.isSuperset(of: shared), "\(both)")
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("one.json"))
        let named = try #require(manifest.inputs.first?.outputs["t"]?.formats.first?.files.first?.path)
        #expect(shared == ["\(named)"])
        // And once the first's photo changes too, the next run of the second, which wrote the
        // old file last, removes it: no journal holds it as its latest now
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 120, height: 80)), to: "one/x.jpg")
        _ = try await PipelineHarness.run(one, in: directory)
        _ = try await PipelineHarness.run(two, in: directory)
        let after = Self.files(directory)
        #expect(after.count == 2 && after.isDisjoint(with: shared), "\(after)")
    }
}
