import Foundation
import TestSupport
import Testing

/// The tests' S3 server cleans up after a test process that cannot: one killed runs no deinit.
@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct MotoServerTests {
    @Test func aServerWhoseParentIsKilledStopsAnswering() throws {
        // Given moto's server started as MotoServer starts it, by a shell that then waits
        let port = try MotoServer.freePort()
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments =
            ["-c", "\(MotoServer.parentVariable)=$$ \"$@\" & echo $!; exec sleep 600", "sh", "/usr/bin/env"]
            + MotoServer.launchArguments(port: port)
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        defer { kill(shell.processIdentifier, SIGKILL) }
        let serverID = try #require(
            String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").first.flatMap { Int32($0) })
        defer { kill(serverID, SIGKILL) }
        try #require(MotoServer.answers(on: port), "moto's server never answered on port \(port)")
        // When the shell is killed, as a crashed or timed-out test process is. Not waited for:
        // Foundation's waitUntilExit() does not return while the server, which inherited the
        // shell's descriptors, lives.
        kill(shell.processIdentifier, SIGKILL)
        // Then the server stops answering within seconds (it checks each second); bounded: 15 s
        var stillAnswering = true
        for _ in 0..<150 where stillAnswering {
            Thread.sleep(forTimeInterval: 0.1)
            stillAnswering = MotoServer.accepts(port)
        }
        #expect(!stillAnswering, "moto's server on port \(port) outlived its parent by 15 s")
    }
}
