import Foundation
import TestSupport
import Testing

/// A folder made once the inotify watch limit is reached cannot be watched: its run makes what
/// it holds after the quiet period, and the watch says why later changes in it go unseen, where
/// the photos put in it were never made and nothing was said. The limit is lowered for the
/// command alone, in a user namespace of its own (`unshare -U -r`); the machine's stays.
@Suite struct WatchLimitCommandTests {
    /// Whether this system lets a test make a user namespace and set its watch limit.
    static let canLowerTheWatchLimit: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-U", "-r", "sh", "-c", "echo 64 > /proc/sys/user/max_inotify_watches"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    @Test func aFolderThatCannotBeWatchedIsMadeAndSaid() throws {
        guard Self.canLowerTheWatchLimit else {
            print("skipped: this system makes no user namespace whose inotify watch limit a test may set (unshare -U -r)")
            return
        }
        // Given a watch of in/**/*.jpg whose limit leaves room for no folder beyond the four it
        // starts with
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        try directory.write(photo, to: "in/d1/a.jpg")
        let output = #"{"name": "s", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{dir}/{stem}.webp"}"#
        try directory.write(Data(PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [output]).utf8), to: "p.json")
        let limited = #"echo 4 > /proc/sys/user/max_inotify_watches && exec "$0" "$@""#
        let command = try BackgroundCommand(
            ["-U", "-r", "sh", "-c", limited, CommandRunner.executable.path, "watch", "--debounce", "2s", "p.json"],
            in: directory.url, executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        defer { command.kill() }
        let watching = command.waitForLine(timeout: 180) { $0.isError && $0.text.hasPrefix("watching ") }
        try #require(watching != nil, "\(command.transcript)")

        // When new folders come, each with a photo written once the watch has seen the folder
        // (and found it empty) but within its quiet period
        for index in 0..<3 {
            try FileManager.default.createDirectory(atPath: directory.path + "/in/n\(index)", withIntermediateDirectories: false)
        }
        Thread.sleep(forTimeInterval: 0.4)
        for index in 0..<3 {
            try directory.write(photo, to: "in/n\(index)/x.jpg")
        }

        // Then their photos are made, and the watch says which folder it cannot watch
        let deadline = Date().addingTimeInterval(120)
        func made() -> Int { (0..<3).filter { FileManager.default.fileExists(atPath: directory.path + "/out/n\($0)/x.webp") }.count }
        while made() < 3, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(made() == 3, "\(command.transcript)")
        let warned = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("cannot watch") }
        #expect(warned != nil, "\(command.transcript)")
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 60) == 143, "\(command.transcript)")
    }

    /// `unshare`'s arguments that run the built command with `arguments` in a user namespace
    /// whose user has no inotify instance left; nil, saying so, where none can be made.
    static func withNoInotifyInstance(_ arguments: [String]) -> [String]? {
        guard canLowerTheWatchLimit else {
            print("skipped: this system makes no user namespace whose inotify limits a test may set (unshare -U -r)")
            return nil
        }
        let limited = #"echo 0 > /proc/sys/user/max_inotify_instances && exec "$0" "$@""#
        return ["-U", "-r", "sh", "-c", limited, CommandRunner.executable.path] + arguments
    }

    @Test func noInotifyInstanceLeftIsNamedAsThatNotAsOpenFiles() throws {
        // Given no inotify instance left for the user
        guard let arguments = Self.withNoInotifyInstance(["watch", "p.json"]) else { return }
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [WatchCommandTests.small], inputPattern: "in/*.jpg")
        let result = try CommandRunner.run(arguments, in: directory.url, executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        // Then the watch says which limit it met, where it said "Too many open files", which `ulimit -n` does not mend
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("fs.inotify.max_user_instances"), "\(result.standardError)")
    }

    #if Server
    @Test func aServerWithNoInotifyInstanceServesAndReloadsAtSIGHUP() throws {
        // Given no inotify instance left for the user, as on a busy node
        guard let arguments = Self.withNoInotifyInstance(["serve", "p.json", "--port", "0", "--log-level", "info"]) else { return }
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [ServeCommandTests.thumb], inputPattern: "in/*.jpg")
        let command = try BackgroundCommand(arguments, in: directory.url, executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        defer { command.kill() }
        // When it starts, it serves, warning that changes go unseen and naming the limit
        let line = command.waitForLine(timeout: 180) { !$0.isError && $0.text.hasPrefix("Serving ") }
        let port = try #require(line?.text.split(separator: ":").last.flatMap { Int($0) }, "\(command.transcript)")
        #expect(command.transcript.contains("fs.inotify.max_user_instances"), "\(command.transcript)")
        #expect(command.transcript.contains("send SIGHUP to reload"), "\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)
        // And an input added is found at SIGHUP
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/added.jpg")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/added.jpg").status == 404)
        command.signal(SIGHUP)
        let reloaded = command.waitForLine(timeout: 60) { $0.isError && $0.text.hasSuffix("reloaded") }
        #expect(reloaded != nil, "\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/added.jpg").status == 200)
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }
    #endif
}
