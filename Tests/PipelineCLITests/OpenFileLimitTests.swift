import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Few file descriptors: the soft limit is raised to the hard one, and when the hard one is too
/// low, inputs fail saying "too many open files" instead of a bad descriptor, a full disk, an
/// unknown format or a crash.
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
            ])
        return (directory, try directory.write(Data(json.utf8), to: "pipeline.json"))
    }

    /// Runs `pipeline run -q FILE` from a shell that first runs `ulimit` with `limit`.
    func run(_ file: String, ulimit limit: String) throws -> (status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // Descriptors the test process leaves open (no close-on-exec) would count against the limit.
        let closeInherited = #"for n in $(ls /proc/$$/fd); do [ "$n" -gt 2 ] && eval "exec $n>&-"; done; "#
        process.arguments = ["-c", closeInherited + "ulimit \(limit) && exec \"$0\" run -q \"$1\"", CommandRunner.executable.path, file]
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

    @Test(arguments: [9, 10, 11, 12, 14])
    func aHardLimitTooLowFailsInputsSayingSoWithoutCrashing(limit: Int) throws {
        // Given a hard limit of a few open files
        let (directory, file) = try setUp()
        defer { withExtendedLifetime(directory) {} }
        // When it runs
        let result = try run(file, ulimit: "-n \(limit)")
        // Then it does not crash; it warns, and every failure says "too many open files"
        #expect(result.status == 0 || result.status == 1, "exit \(result.status): \(result.standardError)")
        #expect(result.standardError.contains("warning: this process may have only \(limit) files open at once (ulimit -n)"))
        let failures = result.standardError.split(separator: "\n").filter { $0.hasPrefix("failed:") }
        for failure in failures {
            #expect(failure.contains("too many open files"), "\(failure)")
        }
        #expect(!result.standardError.contains("Bad file descriptor") && !result.standardError.contains("not an image libvips can read"))
    }
}
