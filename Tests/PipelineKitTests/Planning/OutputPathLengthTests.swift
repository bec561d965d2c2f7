import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// An output path the file system would refuse is refused for its input before it is decoded,
/// counting the longer temporary name the file is first written as.
@Suite struct OutputPathLengthTests {
    @Test func aPathWhoseTemporaryFileWouldPassPathMaxIsRefusedBeforeTheDecode() async throws {
        // Given an output path a few bytes under the 4095 a path may have, in folders of the
        // template's own
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/photo.jpg")
        let base = directory.url.resolvingSymlinksInPath().path + "/out/"
        var folders = ""
        let fill = OutputTarget.maxPathBytes - 10 - base.utf8.count - "/photo.jpg".utf8.count
        while folders.utf8.count < fill {
            if !folders.isEmpty { folders += "/" }
            folders += String(repeating: "f", count: min(200, max(1, fill - folders.utf8.count)))
        }
        let path = "out/\(folders)/{stem}.jpg"
        #expect((base + folders + "/photo.jpg").utf8.count < OutputTarget.maxPathBytes)

        // When it runs
        let (reports, summary) = try await PipelineHarness.run(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [#"{"name": "long", "encode": {"format": "jpeg"}, "path": "\#(path)"}"#]),
            in: directory)

        // Then the input fails, saying how long its temporary file's path would be, and nothing is made
        #expect(summary.failed == 1)
        let reason = try #require(reports.first?.failures.first?.reason)
        #expect(reason.contains("and the temporary file it is first written as"), "\(reason.suffix(300))")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }
}
