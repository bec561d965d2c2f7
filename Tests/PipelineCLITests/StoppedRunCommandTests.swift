import Foundation
import TestSupport
import Testing
import Vips

/// A run stopped (SIGSTOP, Ctrl-Z, `docker pause`) and then continued goes on as if it had not
/// been stopped: `limits.itemTimeout` bounds the work on an input, and a stopped process does
/// none.
@Suite struct StoppedRunCommandTests {
    @Test func aStopLongerThanTheItemTimeoutDoesNotFailTheInputInFlight() throws {
        // Given one input with a quick output and a slow one (an AVIF of noise), under an
        // itemTimeout far longer than the input takes
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 1600, height: 1000)), to: "in.jpg")
        let file = try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in.jpg"],
                    outputs: [
                        #"{"name": "quick", "steps": [{"resize": {"width": 64}}], "encode": {"format": "jpeg"}, "path": "out/quick.jpg"}"#,
                        #"{"name": "slow", "encode": {"format": "avif", "quality": 60, "effort": 4}, "path": "out/slow.avif"}"#,
                    ], extra: #""limits": {"itemTimeout": "12s"}"#
                ).utf8), to: "pipeline.json")
        let errors = directory.path + "/errors.txt"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = ["run", "--quiet", file]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        // When the process is stopped while the input is in flight (its quick output made, its
        // slow one not), for longer than the itemTimeout, and then continued
        let quick = directory.path + "/out/quick.jpg"
        let slow = directory.path + "/out/slow.avif"
        for _ in 0..<3000 where process.isRunning && !FileManager.default.fileExists(atPath: quick) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(process.processIdentifier, SIGSTOP)
        try #require(FileManager.default.fileExists(atPath: quick), "the quick output was never made")
        try #require(!FileManager.default.fileExists(atPath: slow), "the input was done before the stop: it shows nothing")
        Thread.sleep(forTimeInterval: 15)
        kill(process.processIdentifier, SIGCONT)
        for _ in 0..<1200 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }

        // Then the input is made whole, as if the run had never been stopped
        let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        try #require(!process.isRunning, "the run did not end after it was continued")
        #expect(process.terminationStatus == 0, "\(said)")
        #expect(!said.contains("itemTimeout"), "\(said)")
        #expect(FileManager.default.fileExists(atPath: slow))
    }
}
