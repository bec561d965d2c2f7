import Foundation
import TestSupport
import Testing
import Vips

/// A run stopped (SIGSTOP, Ctrl-Z, `docker pause`) and then continued goes on as if it had not
/// been stopped: `limits.itemTimeout` bounds the work on an input, and a stopped process does
/// none.
@Suite struct StoppedRunCommandTests {
    /// `pipeline run --quiet` of the pipeline file `file`, started, and what it has said on
    /// standard error so far (written to a file in `directory`).
    static func run(_ file: String, in directory: TemporaryDirectory) throws -> (Process, said: () -> String) {
        let errors = directory.path + "/errors.txt"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = ["run", "--quiet", file]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        return (process, { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" })
    }

    /// Waits for `process` to end, two minutes at most.
    static func waitForTheEnd(of process: Process) {
        for _ in 0..<1200 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }
    }

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
        let (process, said) = try Self.run(file, in: directory)
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
        Self.waitForTheEnd(of: process)

        // Then every input is made, as if the run had never been stopped
        try #require(!process.isRunning, "the run did not end after it was continued")
        #expect(process.terminationStatus == 0, "\(said())")
        #expect(!said().contains("itemTimeout"), "\(said())")
        #expect(made() == 24)
    }

    @Test func aStopLongerThanTheFetchTimeoutDoesNotFailTheFetchInFlight() throws {
        // Given an origin that answers only when the test lets it, and a run of its photo with a
        // fetch.timeout of 6 s, no retry
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        let state = Locked((asked: false, released: false))
        let origin = try TestHTTPServer { _, _ in
            state.withLock { $0.asked = true }
            for _ in 0..<600 where !state.withLock({ $0.released }) { Thread.sleep(forTimeInterval: 0.1) }
            return .init(status: 200, body: photo)
        }
        defer { origin.stop() }
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: [origin.url("/photo.jpg")],
                    outputs: [#"{"name": "small", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
                    extra: #""fetch": {"timeout": "6s", "retries": 0}"#
                ).utf8), to: "pipeline.json")
        let (process, said) = try Self.run(file, in: directory)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        // When the process is stopped while it waits for the answer, for longer than the timeout,
        // and the answer comes a moment after it is continued
        for _ in 0..<6000 where process.isRunning && !state.withLock({ $0.asked }) { Thread.sleep(forTimeInterval: 0.01) }
        try #require(state.withLock { $0.asked }, "the origin was not asked")
        kill(process.processIdentifier, SIGSTOP)
        Thread.sleep(forTimeInterval: 9)
        kill(process.processIdentifier, SIGCONT)
        Thread.sleep(forTimeInterval: 1.5)
        state.withLock { $0.released = true }
        Self.waitForTheEnd(of: process)

        // Then the fetch takes the answer, as if the run had never been stopped
        try #require(!process.isRunning, "the run did not end after it was continued")
        #expect(process.terminationStatus == 0, "\(said())")
        #expect(!said().contains("timed out"), "\(said())")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo.webp"))
    }
}
