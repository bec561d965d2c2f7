import Foundation
import TestSupport
import Testing
import Vips

/// A run stopped (SIGSTOP, Ctrl-Z, `docker pause`) and then continued goes on as if it had not
/// been stopped: `limits.itemTimeout` bounds the work on an input, and a stopped process does
/// none.
@Suite struct StoppedRunCommandTests {
    @Test func aStopLongerThanTheItemTimeoutDoesNotFailTheInputsInFlight() throws {
        // Given 24 photos, one at a time, each a fraction of a second's work under an itemTimeout
        // many times that, however loaded the machine
        let directory = try TemporaryDirectory()
        for index in 0..<24 {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 600, height: 400 + index)), to: "in/photo-\(index).jpg")
        }
        let file = try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*.jpg"],
                    outputs: [
                        #"{"name": "small", "steps": [{"resize": {"width": 500}}], "encode": {"format": "webp", "effort": 6}, "path": "out/{stem}.webp"}"#
                    ], extra: #""inFlight": 1, "limits": {"itemTimeout": "6s"}"#
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

        // When the process is stopped once its first output is made, its other inputs on their
        // way, for longer than the itemTimeout, and then continued
        let out = directory.path + "/out"
        func made() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".webp") }.count }
        for _ in 0..<12_000 where process.isRunning && made() == 0 { Thread.sleep(forTimeInterval: 0.005) }
        kill(process.processIdentifier, SIGSTOP)
        let madeBeforeTheStop = made()
        try #require(madeBeforeTheStop > 0, "no output was made")
        try #require(madeBeforeTheStop < 24, "the run was done before the stop: it shows nothing")
        Thread.sleep(forTimeInterval: 9)
        kill(process.processIdentifier, SIGCONT)
        for _ in 0..<1200 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }

        // Then every input is made, as if the run had never been stopped
        let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        try #require(!process.isRunning, "the run did not end after it was continued")
        #expect(process.terminationStatus == 0, "\(said)")
        #expect(!said.contains("itemTimeout"), "\(said)")
        #expect(made() == 24)
    }
}
