import Foundation
import PipelineKit
import TestSupport
import Testing

/// An input that is a link to a device, or a FIFO, is named by the path the user gave, with
/// where a link leads and what it is, and is never read; so is any other file a run reads or
/// keeps (a profile, a focus file, a list, the manifest, the journal) that is not a regular file.
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

    /// `pipeline ARGUMENTS`, ended by `timeout` after a minute: a command held by a FIFO's open
    /// is then status 124, not a test that never ends.
    func bounded(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.run(["60", CommandRunner.executable.path] + arguments, executable: URL(fileURLWithPath: "/usr/bin/timeout"))
    }

    @Test func aFIFOWhereTheFileReadsAProfileAFocusFileOrAListIsCalledWhatItIsAndHoldsNothing() throws {
        // Given FIFOs, with no writer, where a pipeline file names an ICC profile, a focus file
        // and a list of inputs
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        for name in ["p.icc", "focus.json", "l.txt"] { #expect(mkfifo(directory.path + "/" + name, 0o600) == 0) }
        let cases: [(json: String, expected: String)] = [
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"],
                    outputs: [#"{"name": "t", "encode": {"format": "jpeg", "iccProfile": "p.icc"}, "path": "out/{stem}.jpg"}"#]),
                "p.icc is neither srgb, p3 nor cmyk, nor a readable ICC file: it is a FIFO (named pipe), not a regular file"
            ),
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
                    extra: #""focusPoints": "focus.json""#),
                "cannot be read (it is a FIFO (named pipe), not a regular file)"
            ),
            (
                #"{"version": 1, "inputs": [{"list": "l.txt"}], "outputs": [{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}"#,
                "cannot read the input list l.txt: it is a FIFO (named pipe), not a regular file"
            ),
        ]
        for (json, expected) in cases {
            let file = try directory.write(Data(json.utf8), to: "p.json")
            // When the file is validated and run
            for command in ["validate", "run"] {
                let result = try bounded([command, file])
                // Then each refuses it at once, saying what stands there, and reads nothing
                #expect(result.status == 2, "\(command): \(result.standardError)")
                #expect(result.standardError.contains(expected), "\(command): \(result.standardError)")
            }
        }
    }

    @Test func aFIFOAtTheManifestsOrTheJournalsPathHoldsNoRun() throws {
        // Given a run with a manifest, made once so that its journal is there
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        let file = try directory.write(Data(json.utf8), to: "p.json")
        #expect(try bounded(["run", file]).status == 0)
        let journal = try #require(directory.allFiles().first { $0.contains("journal") && $0.hasSuffix(".jsonl") })

        // When the manifest is a FIFO with no writer, the run ends: it writes the manifest in its place
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")
        #expect(mkfifo(directory.path + "/out/manifest.json", 0o600) == 0)
        let manifest = try bounded(["run", "--force", file])
        #expect(manifest.status == 0, "\(manifest.standardError)")
        #expect(try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json")).inputs.count == 1)

        // When the journal is, the run ends too, saying what it could not record and why
        try FileManager.default.removeItem(atPath: directory.path + "/" + journal)
        #expect(mkfifo(directory.path + "/" + journal, 0o600) == 0)
        let recorded = try bounded(["run", "--force", file])
        #expect(recorded.status != 124, "\(recorded.standardError)")
        #expect(recorded.standardError.contains("a FIFO (named pipe), not a regular file"), "\(recorded.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
    }
}
