import Foundation
import TestSupport
import Testing

/// A run or a watch whose standard output cannot be written (a full disk, a file past `ulimit -f`)
/// says so and exits 1: its `--json` lines or its summary are cut short, which exit status 0, or
/// a watch going on unheard, would hide.
@Suite struct StandardOutputFailureTests {
    @Test(arguments: [["--json"], ["--verbose"], []])
    func aRunWhoseStandardOutputIsFullSaysSoAndExits1(flags: [String]) throws {
        // Given a run that makes its output, with standard output on a device that is always full
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let outputs = [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "pipeline.json")
        // When it runs
        let result = try CommandRunner.run(
            ["-c", #"exec "$0" run "$@" > /dev/full"#, CommandRunner.executable.path] + flags + [file],
            executable: URL(fileURLWithPath: "/bin/sh"))
        // Then its output is made, and it says standard output was not written, and exits 1
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("error: cannot write to standard output: No space left on device"), "\(result.standardError)")
    }

    /// What the other commands print is their result (a schema, a `<picture>` element): one
    /// cut short by a full disk is said to be, and exits 1.
    @Test(arguments: [["schema"], ["plugins"], ["--version"], ["validate", "pipeline.json"], ["explain", "pipeline.json"]])
    func aCommandWhoseStandardOutputIsFullSaysSoAndExits1(arguments: [String]) throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let outputs = [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#]
        try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "pipeline.json")
        let result = try CommandRunner.run(
            ["-c", #"exec "$0" "$@" > /dev/full"#, CommandRunner.executable.path] + arguments, in: directory.url,
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 1, "\(arguments): \(result.standardError)")
        // (the reason is the system's when the last write failed, as with a short output)
        #expect(result.standardError.hasPrefix("error: cannot write to standard output: "), "\(arguments): \(result.standardError)")
        #expect(result.standardError.hasSuffix("; what was printed is incomplete\n"), "\(arguments): \(result.standardError)")
        // Written whole elsewhere, it exits 0
        #expect(try CommandRunner.run(arguments, in: directory.url).status == 0)
    }

    @Test func aWatchWhoseStandardOutputIsFullStopsAfterThatRunAndExits1() throws {
        // Given a watch whose standard output is a device that is always full, bounded by
        // `timeout` so that a watch going on is a failure (status 124), not a hang
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let outputs = [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "pipeline.json")
        // When it runs
        let result = try CommandRunner.run(
            ["120", "/bin/sh", "-c", #"exec "$0" watch "$@" > /dev/full"#, CommandRunner.executable.path, file],
            executable: URL(fileURLWithPath: "/usr/bin/timeout"))
        // Then its first run makes the output, and it stops there, saying why, with status 1
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("error: cannot write to standard output: No space left on device"), "\(result.standardError)")
        #expect(!result.standardError.contains("watching 1 folder"), "\(result.standardError)")
    }
}
