import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// `pipeline explain` as a user runs it: the bundled pipeline, and the widths it picks for the
/// cores the process may use.
@Suite struct ExplainCommandTests {
    @Test func theCommandPrintsTheExplanation() throws {
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        let result = try CommandRunner.run(["explain", file])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("inputs: \(CommandRunner.samplePhotos.count) "), "\(result.standardOutput)")
        let cores = AvailableCores.count
        #expect(
            result.standardOutput.contains(
                "stage widths: fetch 4, cache 2, decompress \(cores), process \(max(1, cores / 2)), encode \(cores)"))
    }

    @Test func theWarningsValidatePrintsArePrintedToo() throws {
        // Given a file one of whose globs matches no file
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg", "in/*.gif"], outputs: [#"{"name": "o", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        try directory.write(Data(json.utf8), to: "p.json")
        // Then explain warns of it, as validate does, on standard error beside the plan
        let explained = try CommandRunner.run(["explain", directory.path + "/p.json"])
        let validated = try CommandRunner.run(["validate", directory.path + "/p.json"])
        #expect(explained.status == 0 && explained.standardOutput.contains("inputs: 1 "), "\(explained.standardOutput)")
        let warning = validated.standardError.split(separator: "\n").first { $0.hasPrefix("warning:") && $0.contains("in/*.gif") }
        #expect(warning != nil, "\(validated.standardError)")
        #expect(explained.standardError.contains(String(warning ?? "no warning")), "\(explained.standardError)")
    }

    /// An output the run refuses for an input before any work (its path's extension is not
    /// its format's) is named by `explain` as the run and `validate` name it, and validate,
    /// like the run, exits 1.
    @Test func anOutputTheRunRefusesForAnInputIsNamedAsValidateAndTheRunNameIt() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "z", "encode": {"format": "webp"}, "path": "out/{stem}.{ext}"}"#])
        let file = try directory.write(Data(json.utf8), to: "p.json")
        let said =
            #"in/a.jpg: refused: output "z": the path "# + directory.path + "/out/a.jpg ends in .jpg but the output is encoded as webp"
        let explained = try CommandRunner.run(["explain", file])
        #expect(explained.status == 0)
        #expect(
            explained.standardOutput.contains("refused before any work, which a run fails (exit 1):\n  " + said),
            "\(explained.standardOutput)")
        let validated = try CommandRunner.run(["validate", file])
        #expect(validated.status == 1 && validated.standardError.contains(said), "\(validated.standardError)")
        #expect(validated.standardOutput.hasSuffix("; 1 refused (above), which a run would fail\n"), "\(validated.standardOutput)")
        let run = try CommandRunner.run(["run", file])
        #expect(run.status == 1 && run.standardError.contains(#"in/a.jpg: fetch: refused: output "z": the path"#), "\(run.standardError)")
    }

    /// A limit that leaves nothing for images is shown as the budget it is, and as what the
    /// commands that run do with it: refuse it, where the inputs alone would read as failing.
    @Test func aLimitTheRunRefusesIsSaidToBeRefused() throws {
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        let explained = try CommandRunner.run(["explain", file, "--max-memory", "1MB"])
        #expect(explained.status == 0, "\(explained.standardError)")
        let ran = try CommandRunner.run(["run", file, "--max-memory", "1MB"])
        #expect(ran.status == 2)
        // (each process measures what it needs of its own: the figures may differ by a megabyte)
        let refusal = "--max-memory: 1MB leaves nothing for images beside the "
        #expect(ran.standardError.contains("Error: \(refusal)"), "\(ran.standardError)")
        #expect(explained.standardOutput.contains("refused by run, watch and serve (exit 2): \(refusal)"), "\(explained.standardOutput)")
        #expect(!(try CommandRunner.run(["explain", file])).standardOutput.contains("refused by"))
    }

    /// An output whose own widths are enlarged says its art crops are not, as none is.
    @Test func anEnlargingSetSaysItsArtCropsAreNotEnlarged() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "in/a.jpg")
        for (name, enlarging) in [("enlarging", true), ("plain", false)] {
            let output = """
                {"name": "hero", "widths": [200, 600], "formats": ["webp"],
                 "art": [{"media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [100, 400]}],
                 "steps": [{"resize": {"withoutEnlargement": \(!enlarging)}}], "path": "\(name)/{stem}{art}-{width}.{format}"}
                """
            try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]).utf8), to: "\(name).json")
            let result = try CommandRunner.run(["explain", directory.path + "/\(name).json"])
            #expect(result.status == 0, "\(result.standardError)")
            let line = try #require(
                result.standardOutput.split(separator: "\n").first { $0.contains("hero: widths") }, "\(result.standardOutput)")
            #expect(line.contains("enlarged when wider than the image") == enlarging, "\(line)")
            #expect(
                line.contains("art 1:1 for (max-width: 640px) at 100, 400, none wider than its window (never enlarged)") == enlarging,
                "\(line)")
            // and the run makes the 600 px file of the set, and no 400 px art crop of a 200 px window
            #expect(try CommandRunner.run(["run", "--quiet", directory.path + "/\(name).json"]).status == 0)
            let files = directory.allFiles().filter { $0.hasPrefix(name + "/") }
            #expect(files.contains("\(name)/a-600.webp") == enlarging, "\(files)")
            #expect(files.contains("\(name)/a-1x1-200.webp") && !files.contains("\(name)/a-1x1-400.webp"), "\(files)")
        }
    }

    /// The bundled pipeline names no widths: confined to one core (as `taskset` or a container's
    /// cpuset confines it), the run gets one lane per stage, whatever the machine has.
    @Test func theDefaultWidthsFollowTheCoresTheProcessMayUse() throws {
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        process.arguments = ["--cpu-list", "0", CommandRunner.executable.path, "explain", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(text.contains("stage widths: fetch 4, cache 2, decompress 1, process 1, encode 1 (1 core this process may use;"), "\(text)")
    }

    /// A CPU quota of one core (cgroup v1 `cpu.cfs_quota_us`, or v2 `cpu.max`, as `docker
    /// --cpus 1` sets it) gives one lane per stage, however many cores the machine has.
    @Test func aCgroupCPUQuotaBoundsTheDefaultWidths() throws {
        guard
            let output = try CommandRunner.runInCPUCgroup(
                quotaMicroseconds: 100_000, periodMicroseconds: 100_000,
                ["explain", CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path])
        else { return }
        #expect(output.status == 0, "\(output.output)")
        #expect(
            output.output.contains("stage widths: fetch 4, cache 2, decompress 1, process 1, encode 1 (1 core this process may use;"),
            "\(output.output)")
    }
}
