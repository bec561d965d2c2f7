import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// Leftover temporary files of a killed run are removed by the next run; files of a run still
/// writing, and everything else, are left alone.
@Suite struct TemporaryFileSweeperTests {
    /// The id of a process that has exited and been reaped.
    static func deadProcessID() throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Creates `path` with a modification time `age` seconds ago.
    static func touch(_ path: String, age: TimeInterval = 60) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
    }

    func plan(_ directory: TemporaryDirectory, path: String) throws -> RunPlan {
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "encode": {"format": "jpeg"}, "path": "\#(path)"}"#
            ])
        return try PipelineHarness.pipeline(json, in: directory).plan()
    }

    @Test func onlyOldLeftoversOfGoneProcessesAreRemoved() throws {
        // Given an output folder holding temporary files of a killed run, of this (live) process,
        // one written after the sweep started, one without a process id, and ordinary files
        let directory = try TemporaryDirectory()
        let plan = try plan(directory, path: "out/{stem}.jpg")
        let dead = try Self.deadProcessID()
        let out = directory.path + "/out/"
        try Self.touch(out + ".a.jpg.pipeline-tmp-\(dead)-1A2B3C4D")
        try Self.touch(out + ".b.jpg.pipeline-tmp-\(getpid())-1A2B3C4D")
        try Self.touch(out + ".c.jpg.pipeline-tmp-\(dead)-99999999", age: -60)
        try Self.touch(out + ".d.jpg.pipeline-tmp-1A2B3C4D")
        try Self.touch(out + "e.jpg")
        try Self.touch(out + "pipeline-tmp-\(dead)-notes.txt")
        try Self.touch(out + "sub/.f.jpg.pipeline-tmp-\(dead)-1A2B3C4D")
        // When the plan's folders are swept
        let removed = TemporaryFileSweeper.sweep(plan)
        // Then only the gone process's old file and the one without an owner are removed, and
        // subfolders the plan does not write to are not visited
        #expect(Set(removed) == [out + ".a.jpg.pipeline-tmp-\(dead)-1A2B3C4D", out + ".d.jpg.pipeline-tmp-1A2B3C4D"])
        let kept: [String] = [
            "out/.b.jpg.pipeline-tmp-\(getpid())-1A2B3C4D", "out/.c.jpg.pipeline-tmp-\(dead)-99999999",
            "out/e.jpg", "out/pipeline-tmp-\(dead)-notes.txt", "out/sub/.f.jpg.pipeline-tmp-\(dead)-1A2B3C4D",
        ]
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == kept)
    }

    @Test func foldersNamedBySizeAreSweptFromTheirNearestKnownAncestor() throws {
        // Given a template whose folder is the output width, and leftovers in two such folders
        let directory = try TemporaryDirectory()
        let plan = try plan(directory, path: "out/{width}/{stem}.jpg")
        let dead = try Self.deadProcessID()
        try Self.touch(directory.path + "/out/320/.a.jpg.pipeline-tmp-\(dead)-00000000")
        try Self.touch(directory.path + "/out/640/.a.jpg.pipeline-tmp-\(dead)-00000000")
        try Self.touch(directory.path + "/out/640/deeper/.a.jpg.pipeline-tmp-\(dead)-00000000")
        // When swept
        let removed = TemporaryFileSweeper.sweep(plan)
        // Then both are found, and nothing deeper than the template reaches
        #expect(removed.count == 2)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/640/deeper/.a.jpg.pipeline-tmp-\(dead)-00000000"])
        #expect(TemporaryFileSweeper.folders(of: plan).map(\.path) == [directory.path + "/out"])
    }

    @Test func theSweepDoesNotFollowSymbolicLinks() throws {
        let directory = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        let plan = try plan(directory, path: "out/{width}/{stem}.jpg")
        let dead = try Self.deadProcessID()
        try Self.touch(outside.path + "/.a.jpg.pipeline-tmp-\(dead)-00000000")
        try FileManager.default.createDirectory(atPath: directory.path + "/out", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/out/640", withDestinationPath: outside.path)
        #expect(TemporaryFileSweeper.sweep(plan).isEmpty)
        #expect(outside.allFiles() == [".a.jpg.pipeline-tmp-\(dead)-00000000"])
    }

    @Test func aRunRemovesTheLeftoversOfAKilledRunBeforeItStarts() async throws {
        // Given a leftover of a killed run beside where the output goes
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/a.jpg")
        let leftover = directory.path + "/out/.a.jpg.pipeline-tmp-\(try Self.deadProcessID())-0BADF00D"
        try Self.touch(leftover)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        // When a run writes there
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        // Then the output is written and the leftover is gone
        #expect(summary.succeeded == 1)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/a.jpg"])
    }

    @Test func aWriterKilledAndNotYetReapedIsGone() async throws {
        // Given a process that has ended and that nothing has reaped (a zombie), as a run killed
        // in a container whose first process reaps nothing stays
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for argument in arguments { free(argument) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, arguments, environ) == 0)
        defer { waitpid(pid, nil, 0) }
        try await waitUntil("the process ends", within: .seconds(30)) {
            ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") Z ")
        }
        // Then it is not taken for a writer still going: its temporary file is a leftover
        #expect(kill(pid, 0) == 0)
        #expect(!TemporaryFileSweeper.isRunning(pid))
        let name = ".photo.webp.pipeline-tmp-\(pid)-\(ImageWriter.machineTag)-1234abcd"
        #expect(TemporaryFileSweeper.isLeftover(name: name, modified: timespec(tv_sec: 0, tv_nsec: 0), before: Date()))
    }

    @Test func aLeftoverFromAnotherMachineIsRemovedOnlyOnceLongIdle() {
        let start = Date()
        let name = ".photo.webp.pipeline-tmp-\(getpid())-0badf00d-1234abcd"
        func modified(_ secondsAgo: TimeInterval) -> timespec {
            timespec(tv_sec: Int(start.timeIntervalSince1970 - secondsAgo), tv_nsec: 0)
        }
        // Its process id means nothing here (it happens to be this test's): only its age counts.
        #expect(!TemporaryFileSweeper.isLeftover(name: name, modified: modified(60), before: start, machineTag: "feedface"))
        #expect(
            TemporaryFileSweeper.isLeftover(
                name: name, modified: modified(TemporaryFileSweeper.foreignIdleTime + 60), before: start, machineTag: "feedface"))
        // On the machine that wrote it, the live writer keeps it however old.
        #expect(
            !TemporaryFileSweeper.isLeftover(
                name: name, modified: modified(TemporaryFileSweeper.foreignIdleTime + 60), before: start, machineTag: "0badf00d"))
    }

    @Test func temporaryNamesCarryTheMarkerAndTheWritersProcessIDAndStart() throws {
        let name = ImageWriter.temporaryName(for: "photo.webp")
        let start = try #require(TemporaryFileSweeper.startTime(of: getpid()))
        #expect(name.hasPrefix(".photo.webp.pipeline-tmp-\(getpid())-\(ImageWriter.machineTag)-\(start)-"))
        #expect(ImageWriter.machineTag.count == 8)
        #expect(TemporaryFileSweeper.isLeftover(name: name, modified: timespec(tv_sec: 0, tv_nsec: 0), before: Date()) == false)
    }

    @Test func aLeftoverOfAnEarlierProcessWithThisProcesssIDIsGone() throws {
        // Given a file named by a writer with this process's id and machine that started at
        // another time, as a restarted container's first process is PID 1 again
        let start = try #require(TemporaryFileSweeper.startTime(of: getpid()).flatMap { Int($0) })
        let earlier = ".photo.webp.pipeline-tmp-\(getpid())-\(ImageWriter.machineTag)-\(start - 1)-1234abcd"
        // Then it is a leftover, where a file of this process is not, nor one named before
        // writers recorded their start
        let long = timespec(tv_sec: 0, tv_nsec: 0)
        #expect(TemporaryFileSweeper.isLeftover(name: earlier, modified: long, before: Date()))
        let own = ".photo.webp.pipeline-tmp-\(getpid())-\(ImageWriter.machineTag)-\(start)-1234abcd"
        #expect(!TemporaryFileSweeper.isLeftover(name: own, modified: long, before: Date()))
        let older = ".photo.webp.pipeline-tmp-\(getpid())-\(ImageWriter.machineTag)-1234abcd"
        #expect(!TemporaryFileSweeper.isLeftover(name: older, modified: long, before: Date()))
    }

    @Test func aManifestsAndAReportsLeftoversAreRemovedByTheirNextWrite() async throws {
        // Given a manifest and a report folder beside the temporary files a killed run left
        // while it wrote them (no run sweeps these folders: they hold no output), and a live
        // writer's
        let directory = try TemporaryDirectory()
        let dead = try Self.deadProcessID()
        let killed = [
            "site/.images.json.pipeline-tmp-\(dead)-\(ImageWriter.machineTag)-1A2B3C4D",
            "site/.images.json.pipeline-tmp-5E6F7A8B", "report/.report.json.pipeline-tmp-\(dead)-\(ImageWriter.machineTag)-1A2B3C4D",
            "report/.index.html.pipeline-tmp-\(dead)-\(ImageWriter.machineTag)-1A2B3C4D",
        ]
        let live = "site/.images.json.pipeline-tmp-\(getpid())-\(ImageWriter.machineTag)-1A2B3C4D"
        for path in killed + [live] { try Self.touch(directory.path + "/" + path) }
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
            extra: #""manifest": {"path": "site/images.json", "urlPrefix": "/img/"}"#)

        // When a run writes the manifest, and then its report
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let recorder = try RunRecorder(definition: pipeline.definition)
        for await event in try pipeline.run() { recorder.record(event) }
        try await ReportWriter.write(recorder.report, to: directory.url.appendingPathComponent("report"), inputDirectory: directory.url)

        // Then the killed run's files are gone, the live writer's stays
        let left = directory.allFiles().filter { $0.contains(ImageWriter.temporaryMarker) }
        #expect(left == [live], "\(left)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/site/images.json"))
    }
}
