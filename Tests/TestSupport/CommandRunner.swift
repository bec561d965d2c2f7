import Foundation

/// Runs the built `pipeline` executable, as a user would.
package struct CommandRunner {
    package struct Result {
        package let status: Int32
        package let standardOutput: String
        package let standardError: String
        /// Standard output's bytes, for a command that writes an image there.
        package let standardOutputData: Data
    }

    /// The `pipeline` binary SwiftPM built beside the test bundle.
    package static var executable: URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // swift-testing may run from inside the .xctest bundle folder.
        while folder.path != "/", !FileManager.default.fileExists(atPath: folder.appendingPathComponent("pipeline").path) {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("pipeline")
    }

    /// The repository's root folder (for the bundled pipelines and the README): this file is
    /// Tests/TestSupport/CommandRunner.swift.
    package static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The bundled sample photographs, in Pipelines/samples and its folders, as paths below it:
    /// the inputs of Pipelines/thumbnails.json.
    package static var samplePhotos: [String] {
        let samples = repositoryRoot.appendingPathComponent("Pipelines/samples").path
        return ((try? FileManager.default.subpathsOfDirectory(atPath: samples)) ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
    }

    /// Starts the command in the background with its output thrown away (to be killed, say).
    package static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `pipeline` (this build's, or `executable`) with `arguments`; `environment` adds to
    /// (or overrides) this process's variables; `standardInput`, when given, is what the command
    /// reads on its standard input.
    package static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], executable: URL = executable,
        standardInput: Data? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        // From a file, not a pipe: a command that exits before reading it all cannot stall the
        // test, nor end it with SIGPIPE.
        if let standardInput {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-stdin-\(UUID().uuidString)")
            try standardInput.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            process.standardInput = try FileHandle(forReadingFrom: file)
        }
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe cannot stall the child.
        let errorData = Data.readAll(error.fileHandleForReading, inBackground: true)
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData(), as: UTF8.self), standardOutputData: outputData)
    }
}

extension Data {
    /// Reads a handle to its end on another thread; call the result to wait for the bytes.
    package static func readAll(_ handle: FileHandle, inBackground: Bool) -> () -> Data {
        let box = DataBox()
        let thread = Thread {
            box.data = handle.readDataToEndOfFile(); box.done.signal()
        }
        thread.start()
        return {
            box.done.wait(); return box.data
        }
    }
}

private final class DataBox: @unchecked Sendable {
    // Written once by the reading thread before `done` is signalled, read after waiting on it.
    package var data = Data()
    package let done = DispatchSemaphore(value: 0)
}
