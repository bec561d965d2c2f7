import Foundation
import TestSupport
import Testing

/// Folders that take no new file (`chattr +i`): a cache folder whose journal file can still be
/// written, which keeps the records, so the run does not say that the next run makes everything
/// again; and a manifest's folder, whose failure `--json` reports, and a server logs.
@Suite(.enabled(if: ImmutableFolders.work, "chattr +i is not available here (it needs root and ext4 or the like)"))
struct ImmutableFolderTests {
    @Test func aJournalThatCanStillBeWrittenIsNotSaidToBeLost() throws {
        // Given a pipeline that ran once, with its journal in its cache folder
        let journal = JournalTests()
        let directory = try TemporaryDirectory()
        try journal.writeInputs(directory, prefix: "p", count: 2)
        let file = try journal.writePipeline(directory)
        #expect(try CommandRunner.run(["run", "--quiet", file]).status == 0)
        // When the folder takes no new file, and an input changes
        let cache = directory.path + "/.cache"
        try #require(ImmutableFolders.chattr("+i", cache))
        defer { ImmutableFolders.chattr("-i", cache) }
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 50, height: 40)), to: "in/p1.jpg")
        let result = try CommandRunner.run(["run", file])
        // Then the run does not say its outputs go unrecorded, and the next finds them up to date
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("not recorded"), "\(result.standardError)")
        let next = try CommandRunner.run(["run", file])
        #expect(next.standardOutput.contains("0 outputs written, 4 up to date"), "\(next.standardOutput)")
    }

    @Test func aManifestThatCannotBeWrittenIsInRunFinishedWithJSON() throws {
        // Given a pipeline whose manifest's folder takes no new file
        let directory = try TemporaryDirectory()
        try JournalTests().writeInputs(directory, prefix: "p", count: 1)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
            extra: #""manifest": {"path": "site/manifest.json"}"#)
        let file = try directory.write(Data(json.utf8), to: "p.json")
        let site = try directory.write(Data(), to: "site/.keep")
        let folder = (site as NSString).deletingLastPathComponent
        try #require(ImmutableFolders.chattr("+i", folder))
        defer { ImmutableFolders.chattr("-i", folder) }
        // When it runs with --json
        let result = try CommandRunner.run(["run", "--json", file])
        // Then it exits 1, and its last line says why the manifest could not be written
        #expect(result.status == 1, "\(result.standardError)")
        let last = try #require(result.standardOutput.split(separator: "\n").last.map(String.init))
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(event["event"] as? String == "runFinished")
        let problem = try #require(event["manifestProblem"] as? String, "\(last)")
        #expect(problem == "cannot write the manifest \(folder)/manifest.json: Operation not permitted", "\(problem)")
    }

    #if Server
    @Test func aServerSaysOnceThatItsRunsCannotWriteTheManifestOrTheJournal() throws {
        // Given a pipeline whose manifest's folder and cache folder take no new file
        let directory = try TemporaryDirectory()
        try JournalTests().writeInputs(directory, prefix: "p", count: 2)
        try directory.write(Data("<html>404 Not Found</html>\n".utf8), to: "in/broken.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
            extra: #""manifest": {"path": "site/manifest.json"}, "cache": {"directory": ".cache"}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        for folder in ["site", ".cache"] {
            try directory.write(Data(), to: "\(folder)/.keep")
            try #require(ImmutableFolders.chattr("+i", directory.path + "/" + folder))
        }
        defer { for folder in ["site", ".cache"] { ImmutableFolders.chattr("-i", directory.path + "/" + folder) } }
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }

        // When two requests make files, and one between them makes none (its input is no image)
        for input in ["p0", "broken", "p1"] {
            #expect(try LoopbackHTTPClient.send(port: port, target: "/t/\(input).jpg").status == (input == "broken" ? 422 : 200))
        }

        // Then the log says, once each, that the manifest is not written and the files not recorded
        let second = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("path=/t/p1.jpg") }
        #expect(second != nil, "\(command.transcript)")
        let lines = command.transcript.split(separator: "\n")
        let manifest = lines.filter { $0.contains("a run could not write the manifest") }
        #expect(manifest.count == 1 && manifest[0].contains("site/manifest.json"), "\(command.transcript)")
        let journal = lines.filter { $0.contains("a run could not write beside its files") }
        #expect(journal.count == 1 && journal[0].contains("not recorded, so the next run makes them again"), "\(command.transcript)")
    }
    #endif
}

/// `chattr +i` and `-i` on folders, for the tests of folders that take no new file.
enum ImmutableFolders {
    /// Whether `chattr +i` makes a folder here take no new file (root on ext4, xfs, btrfs…).
    static let work: Bool = {
        guard let folder = try? TemporaryDirectory() else { return false }
        guard chattr("+i", folder.path) else { return false }
        defer { _ = chattr("-i", folder.path) }
        return !FileManager.default.createFile(atPath: folder.path + "/probe", contents: Data())
    }()

    /// Runs `chattr FLAG PATH`; whether it succeeded.
    @discardableResult
    static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["chattr", flag, path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
