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
