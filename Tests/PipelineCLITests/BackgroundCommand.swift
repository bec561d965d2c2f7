import Foundation
import TestSupport

/// The built `pipeline` binary running in the background (`pipeline watch`), whose output lines
/// a test reads as they come, each wait bounded by a deadline.
final class BackgroundCommand: @unchecked Sendable {
    /// One line the command printed, and where.
    struct Line: Sendable {
        let text: String
        let isError: Bool
    }

    private let process = Process()
    // Guarded by `condition`: the lines so far, and how many of the two pipes have ended.
    private var lines: [Line] = []
    private var closedPipes = 0
    private let condition = NSCondition()

    /// Starts `pipeline` with `arguments`; `environment` adds to (or overrides) this process's
    /// variables. Under `addressSpaceLimit` kilobytes (`ulimit -v`), `executable` is the binary
    /// to start: one a sanitizer's shadow memory does not keep from starting.
    init(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        addressSpaceLimit: Int? = nil, executable: URL = CommandRunner.executable
    ) throws {
        if let addressSpaceLimit {
            // The shell sets the limit, then becomes the binary: the process ID is the binary's.
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -v \(addressSpaceLimit) && exec \"$@\"", "bash", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        for (pipe, isError) in [(output, false), (error, true)] {
            let handle = pipe.fileHandleForReading
            Thread { [self] in read(handle, isError: isError) }.start()
        }
    }

    /// Ends the command with SIGKILL if it is still running (for a test's `defer`).
    deinit {
        kill()
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    /// The command's process ID.
    var processIdentifier: Int32 { process.processIdentifier }

    func signal(_ number: Int32) {
        Foundation.kill(process.processIdentifier, number)
    }

    /// Everything printed so far, both streams, in the order read.
    var transcript: String {
        condition.withLock { lines.map { ($0.isError ? "err: " : "out: ") + $0.text }.joined(separator: "\n") }
    }

    /// How many lines have been read so far: a mark to wait for lines after.
    var lineCount: Int { condition.withLock { lines.count } }

    /// The first line after the first `after` lines that satisfies `predicate`, waiting up to
    /// `timeout` seconds for it; nil when none came in time or the command ended without it.
    func waitForLine(after: Int = 0, timeout: Double = 60, where predicate: (Line) -> Bool) -> Line? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if lines.count > after, let line = lines[after...].first(where: predicate) { return line }
            if closedPipes == 2 { return nil }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// The exit status, waiting up to `timeout` seconds for the command to end; nil if it did not.
    func waitForExit(timeout: Double = 60) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning {
            if Date() > deadline { return nil }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func read(_ handle: FileHandle, isError: Bool) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                condition.withLock {
                    lines.append(Line(text: text, isError: isError))
                    condition.broadcast()
                }
            }
        }
        condition.withLock {
            if !pending.isEmpty { lines.append(Line(text: String(decoding: pending, as: UTF8.self), isError: isError)) }
            closedPipes += 1
            condition.broadcast()
        }
    }
}
