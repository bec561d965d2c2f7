import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Few file descriptors: the soft limit is raised to the hard one; when the hard one is low the
/// run takes fewer inputs at once, and when it leaves no room for one the run stops before it
/// starts, saying so, instead of failing with a bad descriptor, a full disk, an unknown format or
/// a crash (libdispatch ends the process when it finds no descriptor free).
@Suite struct OpenFileLimitTests {
    func setUp() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        for index in 0..<12 {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 200 + index, height: 150)), to: "in/n\(index).jpg")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "a", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-a.jpg"}"#,
                #"{"name": "b", "steps": [{"resize": {"width": 80}}], "encode": {"format": "webp"}, "path": "out/{stem}-b.webp"}"#,
            ], extra: #""inFlight": 9"#)
        return (directory, try directory.write(Data(json.utf8), to: "pipeline.json"))
    }

    /// Runs `pipeline run -q FILE` (or `arguments`) from a shell that first runs `ulimit` with `limit`.
    func run(
        _ file: String, ulimit limit: String, arguments: [String]? = nil, executable: URL = CommandRunner.executable
    ) throws -> (status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // Descriptors the test process leaves open (no close-on-exec) would count against the limit.
        let closeInherited = #"for n in $(ls /proc/$$/fd); do [ "$n" -gt 2 ] && eval "exec $n>&-"; done; "#
        process.arguments =
            ["-c", closeInherited + "ulimit \(limit) && exec \"$0\" \"$@\"", executable.path]
            + (arguments ?? ["run", "-q", file])
        let error = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = error
        try process.run()
        let data = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func aLowSoftLimitIsRaisedToTheHardOne() throws {
        // Given a soft limit of 10 open files under a higher hard limit
        let (directory, file) = try setUp()
        // When it runs
        let result = try run(file, ulimit: "-Sn 10")
        // Then every output is written
        #expect(result.status == 0, "\(result.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 24)
    }

    @Test(arguments: [9, 14, 27])
    func aLimitWithNoRoomForOneInputStopsTheRunBeforeItStarts(limit: Int) throws {
        // Given a hard limit below what one input in flight needs beside the run's own files
        let (directory, file) = try setUp()
        // When it runs
        let result = try run(file, ulimit: "-n \(limit)")
        // Then it stops at once, saying why and what to do, having written nothing
        #expect(result.status == 1, "exit \(result.status): \(result.standardError)")
        #expect(
            result.standardError.contains(
                "error: this process may have only \(limit) files open at once (ulimit -n), and a run needs at least 28"),
            "\(result.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }

    @Test(arguments: [4, 7])
    func aLimitTooLowForAnyCommandIsSaidBeforeAnything(limit: Int) throws {
        // Given a hard limit that leaves libdispatch no descriptor for its event loop, which then
        // ends the process by an illegal instruction
        // (a sanitizer's runtime, which opens files of its own, ends the process first below 7)
        let executable =
            limit < 7
            ? CommandRunner.unsanitizedExecutable(for: "ends the process before main when it may open only \(limit) files")
            : CommandRunner.executable
        guard let executable else { return }
        let (directory, file) = try setUp()
        for arguments in [["--version"], ["validate", file], ["run", file]] {
            // When a command starts
            let result = try run(file, ulimit: "-n \(limit)", arguments: arguments, executable: executable)
            // Then it stops at once, saying why, having written nothing
            #expect(result.status == 1, "\(arguments): exit \(result.status): \(result.standardError)")
            #expect(
                result.standardError.contains(
                    "error: this process may have only \(limit) files open at once (ulimit -n), and pipeline needs at least 8 to start"),
                "\(arguments): \(result.standardError)")
        }
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }

    @Test(arguments: [28, 40])
    func aLowLimitRunsFewerInputsAtOnceAndWritesEveryOutput(limit: Int) throws {
        // Given a hard limit that fits fewer inputs in flight than the file's inFlight (9)
        let (directory, file) = try setUp()
        // When it runs
        let result = try run(file, ulimit: "-n \(limit)")
        // Then it says how many it takes at a time, and no input runs out of descriptors
        let fitting = (limit - OpenFileLimit.heldByTheRun) / OpenFileLimit.heldPerInput
        #expect(result.status == 0, "exit \(result.status): \(result.standardError)")
        #expect(
            result.standardError.contains("so the run takes at most \(fitting) input\(fitting == 1 ? "" : "s") at a time"),
            "\(result.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 24)
    }

    /// A one-off of one photo has no more in flight than that one: the limit holds nothing back.
    @Test func aConvertOfOnePhotoUnderALowLimitSaysNothingOfInputsAtATime() throws {
        let (directory, _) = try setUp()
        let result = try run(
            "", ulimit: "-n 40", arguments: ["convert", directory.path + "/in/n0.jpg", directory.path + "/out/n0.webp", "--width", "50"])
        #expect(result.status == 0, "exit \(result.status): \(result.standardError)")
        #expect(!result.standardError.contains("at a time"), "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/n0.webp"))
    }

    /// A run of fewer inputs than the limit fits at a time is not slowed by it: nothing is said.
    @Test func aRunOfFewerInputsThanTheLimitFitsSaysNothingOfInputsAtATime() throws {
        // Given three of the photos, and a limit that fits four at a time where the file asks for nine
        let (directory, _) = try setUp()
        let json = PipelineHarness.json(
            inputs: ["in/n1*.jpg"],
            outputs: [#"{"name": "a", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-a.jpg"}"#],
            extra: #""inFlight": 9"#)
        let file = try directory.write(Data(json.utf8), to: "three.json")
        // When they run
        let result = try run(file, ulimit: "-n 40")
        // Then every output is made, and no warning is given
        #expect(result.status == 0, "exit \(result.status): \(result.standardError)")
        #expect(!result.standardError.contains("at a time"), "\(result.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 3)
    }

    @Test func theInputsInFlightAreHeldToWhatTheLimitFits() {
        #expect(OpenFileLimit.inFlight(fitting: 9, limit: 27) == nil)
        #expect(OpenFileLimit.inFlight(fitting: 9, limit: 28) == 1)
        #expect(OpenFileLimit.inFlight(fitting: 9, limit: 40) == 4)
        #expect(OpenFileLimit.inFlight(fitting: 9, limit: 1024) == 9)
        #expect(OpenFileLimit.inFlight(fitting: 9, limit: nil) == 9)
    }
}
