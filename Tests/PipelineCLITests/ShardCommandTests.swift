import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Sharded runs of the command, and `merge-reports` over their reports.
@Suite struct ShardCommandTests {
    @Test func shardedRunsTogetherMakeWhatOneRunMakesAndMergeReportsCountsEachInputOnce() throws {
        // Given 24 photos, one of them listed twice (a glob and its own name)
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in 0..<24 { try directory.write(photo + Data("\(index)".utf8), to: "in/p\(index).jpg") }
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg", "in/p7.jpg"], "outputs": [
                  {"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
                """.utf8), to: "p.json")
        let file = directory.url.appendingPathComponent("p.json").path

        // When four shards run, each with its report
        var outputs: [[String]] = []
        for index in 0..<4 {
            let before = Set(directory.allFiles().filter { $0.hasPrefix("out/") })
            let result = try CommandRunner.run([
                "run", "--quiet", "--shard", "\(index)/4", "--report", directory.url.appendingPathComponent("reports/\(index)").path, file,
            ])
            #expect(result.status == 0, "\(result.standardError)")
            outputs.append(Set(directory.allFiles().filter { $0.hasPrefix("out/") }).subtracting(before).sorted())
        }

        // Then every output was made by exactly one shard, all 24 together
        #expect(outputs.reduce(0) { $0 + $1.count } == 24)
        #expect(Set(outputs.flatMap { $0 }).count == 24)
        #expect(outputs.allSatisfy { !$0.isEmpty })

        // merge-reports accounts for every listing once, and names a missing shard
        let merged = directory.url.appendingPathComponent("merged").path
        let reports = (0..<4).map { directory.url.appendingPathComponent("reports/\($0)").path }
        let all = try CommandRunner.run(["merge-reports", "--output", merged] + reports)
        #expect(all.status == 0, "\(all.standardError)")
        let report = try ReportMerger.read(URL(fileURLWithPath: merged))
        #expect(report.inputs == 25 && report.succeeded == 25 && report.shard == nil)
        #expect(Set(report.items.map(\.input)).count == 24)
        let three = try CommandRunner.run(["merge-reports", "--output", merged + "-3"] + reports.dropLast())
        #expect(three.status == 1 && three.standardError.contains("missing shards: 3 of 4"))
        let twice = try CommandRunner.run(["merge-reports", "--output", merged + "-x", reports[0], reports[0]])
        #expect(twice.status == 2 && twice.standardError.contains("both of shard 0/4"))

        // explain and validate say which shard and how many inputs fall in it
        let explain = try CommandRunner.run(["explain", file], environment: ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"])
        #expect(explain.standardOutput.contains("shard: 2/4 (Slurm: SLURM_ARRAY_TASK_ID=2"), "\(explain.standardOutput)")
        #expect(explain.standardOutput.contains("of 25 inputs"))
    }

    @Test func mergeReportsPreviewsAnAllowedSVGFromItsOutputNotWithTheSVGLoader() throws {
        // Given a run that allows SVG, with its report
        let directory = try TemporaryDirectory()
        try directory.write(
            Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/></svg>"#.utf8),
            to: "in/logo.svg")
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.svg"], "decompress": {"allowUntrusted": ["svg"]}, "outputs": [
                  {"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
                """.utf8), to: "p.json")
        let report = directory.url.appendingPathComponent("report").path
        let run = try CommandRunner.run([
            "run", "--quiet", "--shard", "0/1", "--report", report, directory.url.appendingPathComponent("p.json").path,
        ])
        #expect(run.status == 0, "\(run.standardError)")

        // When the report is merged, in a process that allows nothing
        let merged = directory.url.appendingPathComponent("merged").path
        let result = try CommandRunner.run(["merge-reports", "--output", merged, "--input-directory", directory.path, report])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasPrefix("merged 1 of 1 shard: 1 input, 1 succeeded, 0 failed, 0 not run; 1 output written,"))

        // Then the input's preview is its output's: the SVG itself is not read with librsvg,
        // which libvips keeps for trusted files
        let html = try String(contentsOfFile: merged + "/index.html", encoding: .utf8)
        #expect(html.contains("preview from t"), "\(html.count) characters")
        #expect(html.contains("data:image/jpeg;base64,"))
    }
}
