import Foundation
import Testing
@testable import PipelineKit

@Suite struct ShardTests {
    let names = (0..<10_000).map { "photos/\($0 / 100)/IMG_\(String(format: "%04d", $0)).jpg" }

    @Test func everyInputIsInExactlyOneShardAndTheShardsAreBalanced() throws {
        for count in [2, 4, 7] {
            let shards = try (0..<count).map { try Shard(index: $0, count: count) }
            var sizes = Array(repeating: 0, count: count)
            for name in names {
                let owners = shards.filter { $0.contains(key: "file:" + name) }
                #expect(owners.count == 1)
                sizes[owners.first?.index ?? 0] += 1
            }
            // A fair split of 10,000 names varies by chance: within four standard deviations of the
            // binomial (4% of the mean for 2 shards, 6.9% for 4, 9.8% for 7); a real bias shows beyond.
            let expected = Double(names.count) / Double(count)
            let deviation = (expected * (1 - 1 / Double(count))).squareRoot()
            for size in sizes {
                #expect(abs(Double(size) - expected) <= 4 * deviation, "shard sizes \(sizes) for \(count) shards")
            }
        }
    }

    @Test func addingInputsMovesNoExistingOne() {
        let before = names.map { Shard.shard(of: $0, count: 4) }
        let more = names + (0..<1000).map { "new/\($0).png" }
        let after = more.prefix(names.count).map { Shard.shard(of: $0, count: 4) }
        #expect(before == after)
    }

    @Test func shardsAreParsedAndCheckedAndReadFromSchedulers() throws {
        #expect(try Shard(parsing: "2/4") == Shard(index: 2, count: 4))
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3"] {
            #expect(throws: ShardError.self, "\(bad)") { try Shard(parsing: bad) }
        }
        // Slurm arrays may start at 1: the index is relative to SLURM_ARRAY_TASK_MIN
        let slurm = try Shard.fromScheduler(["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"])
        #expect(slurm?.shard == (try Shard(index: 2, count: 4)) && slurm?.source.hasPrefix("Slurm") == true)
        let kubernetes = try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "1", "PIPELINE_SHARD_COUNT": "3"])
        #expect(kubernetes?.shard == (try Shard(index: 1, count: 3)))
        #expect(try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "1"], countOverride: 2)?.shard == (try Shard(index: 1, count: 2)))
        #expect(throws: ShardError.self) { try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "1"]) }
        #expect(try Shard.fromScheduler(["AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "5"])?.shard == (try Shard(index: 0, count: 5)))
        #expect(try Shard.fromScheduler(["CLOUD_RUN_TASK_INDEX": "4", "CLOUD_RUN_TASK_COUNT": "5"])?.shard == (try Shard(index: 4, count: 5)))
        #expect(try Shard.fromScheduler(["PATH": "/bin"]) == nil)
    }

    @Test func schedulerNumbersBeyondIntsRangeAreRefusedNamingTheVariablesNotATrap() {
        // Given Slurm variables whose difference does not fit an Int
        let cases: [[String: String]] = [
            ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "-9223372036854775808", "SLURM_ARRAY_TASK_COUNT": "4"],
            ["SLURM_ARRAY_TASK_ID": "-9223372036854775808", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"],
            ["SLURM_ARRAY_TASK_ID": "99999999999999999999", "SLURM_ARRAY_TASK_COUNT": "4"],
        ]
        for environment in cases {
            // When the shard is worked out, then it is refused with the variable named
            do {
                _ = try Shard.fromScheduler(environment)
                Issue.record("\(environment) was accepted")
            } catch {
                #expect(error.description.contains("SLURM_ARRAY_TASK_"), "\(error.description)")
            }
        }
    }

    @Test func shardedRunsTogetherMakeWhatOneRunMakesAndMergeReportsCountsEachInputOnce() throws {
        // Given 24 photos, one of them listed twice (a glob and its own name)
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in 0..<24 { try directory.write(photo + Data("\(index)".utf8), to: "in/p\(index).jpg") }
        try directory.write(Data("""
            {"version": 1, "inputs": ["in/*.jpg", "in/p7.jpg"], "outputs": [
              {"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
            """.utf8), to: "p.json")
        let file = directory.url.appendingPathComponent("p.json").path

        // When four shards run, each with its report
        var outputs: [[String]] = []
        for index in 0..<4 {
            let before = Set(directory.allFiles().filter { $0.hasPrefix("out/") })
            let result = try CommandRunner.run(["run", "--quiet", "--shard", "\(index)/4", "--report", directory.url.appendingPathComponent("reports/\(index)").path, file])
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
}
