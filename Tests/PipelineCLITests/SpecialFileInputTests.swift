import Foundation
import TestSupport
import Testing

/// An input that is a link to a device, or a FIFO, is named by the path the user gave, with
/// where a link leads and what it is, and is never read.
@Suite struct SpecialFileInputTests {
    @Test func aLinkToDevZeroIsNamedByItsOwnPathAndNeverRead() throws {
        // Given a link to /dev/zero named in the inputs, another one a glob finds, and a FIFO
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/in", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/zero.jpg", withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/z.jpg", withDestinationPath: "/dev/zero")
        #expect(mkfifo(directory.path + "/in/f.jpg", 0o600) == 0)
        let json = PipelineHarness.json(
            inputs: ["zero.jpg", "in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs
        let result = try CommandRunner.run(["run", file])
        // Then the named link fails as itself, saying where it leads and what that is
        #expect(result.status == 1)
        #expect(
            result.standardError.contains(
                "failed: zero.jpg: fetch: \(directory.path)/zero.jpg (a symbolic link to /dev/zero) is a character device, not a regular file"
            ),
            "\(result.standardError)")
        // And the glob's warning names the link and the FIFO by their paths
        #expect(
            result.standardError.contains("\(directory.path)/in/z.jpg (a symbolic link to /dev/zero, a character device)"),
            "\(result.standardError)")
        #expect(result.standardError.contains("\(directory.path)/in/f.jpg (a FIFO)"), "\(result.standardError)")
        // And explain, which reads headers, reads neither (a read of /dev/zero never ends) and names the link
        let explained = try CommandRunner.run(["explain", file])
        #expect(explained.status == 0, "\(explained.standardError)")
        #expect(
            explained.standardOutput.contains("  zero.jpg: fetch: it is a character device, not a regular file"),
            "\(explained.standardOutput)")
    }
}
