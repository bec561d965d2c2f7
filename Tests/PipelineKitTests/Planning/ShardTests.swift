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
        // and a stepped range (--array=0-6:2) numbers its tasks a step apart: 0, 2, 4, 6 are 0 to 3
        for (task, index) in [("0", 0), ("2", 1), ("4", 2), ("6", 3)] {
            let stepped = try Shard.fromScheduler([
                "SLURM_ARRAY_TASK_ID": task, "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4",
            ])
            #expect(stepped?.shard == (try Shard(index: index, count: 4)), "\(task)")
            #expect(stepped?.source.contains("over SLURM_ARRAY_TASK_STEP=2") == true)
        }
        let kubernetes = try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "1", "PIPELINE_SHARD_COUNT": "3"])
        #expect(kubernetes?.shard == (try Shard(index: 1, count: 3)))
        #expect(try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "1"], countOverride: 2)?.shard == (try Shard(index: 1, count: 2)))
        #expect(throws: ShardError.self) { try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "1"]) }
        #expect(
            try Shard.fromScheduler(["AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "5"])?.shard
                == (try Shard(index: 0, count: 5)))
        #expect(
            try Shard.fromScheduler(["CLOUD_RUN_TASK_INDEX": "4", "CLOUD_RUN_TASK_COUNT": "5"])?.shard == (try Shard(index: 4, count: 5)))
        #expect(try Shard.fromScheduler(["PATH": "/bin"]) == nil)
    }

    @Test func aShardTheVariablesCannotMakeIsRefusedNamingThem() throws {
        // Slurm's lowest index unset, an array from 1 gives index 5 of 3: the message says so
        let slurm = #expect(throws: ShardError.self) {
            try Shard.fromScheduler(["SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "3"])
        }
        #expect(slurm?.description.contains("SLURM_ARRAY_TASK_MIN unset, so 0") == true, "\(slurm?.description ?? "")")
        // An array listed task by task (--array=1,5,9) has no order to shard by: the message says what to use
        let listed = #expect(throws: ShardError.self) {
            try Shard.fromScheduler(["SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"])
        }
        #expect(listed?.description.contains("use a range (--array=0-N or 0-N:STEP)") == true, "\(listed?.description ?? "")")
        // and a task off its range's step is refused
        let off = #expect(throws: ShardError.self) {
            try Shard.fromScheduler([
                "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4",
            ])
        }
        #expect(off?.description.contains("not SLURM_ARRAY_TASK_MIN=0 plus a multiple of SLURM_ARRAY_TASK_STEP=2") == true)
        // and a count with no scheduler's index to go with it is refused, not ignored
        let count = #expect(throws: ShardError.self) { try Shard.fromScheduler(["PATH": "/bin"], countOverride: 3) }
        #expect(count?.description.contains("give --shard INDEX/COUNT") == true, "\(count?.description ?? "")")
        // and so is a Job's count with no index (a Job not Indexed), where every task would make every input
        let unindexed = #expect(throws: ShardError.self) { try Shard.fromScheduler(["PIPELINE_SHARD_COUNT": "8"]) }
        #expect(unindexed?.description.contains("completionMode: Indexed") == true, "\(unindexed?.description ?? "")")
        // and a count that is not the one the scheduler gives, which would leave shards no task makes
        for (index, total) in [
            ("CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT"), ("AWS_BATCH_JOB_ARRAY_INDEX", "AWS_BATCH_JOB_ARRAY_SIZE"),
            ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"), ("JOB_COMPLETION_INDEX", "PIPELINE_SHARD_COUNT"),
        ] {
            let two = #expect(throws: ShardError.self) { try Shard.fromScheduler([index: "1", total: "4"], countOverride: 8) }
            #expect(
                two?.description == "--shard-count 8 and \(total)=4 give two shard counts: "
                    + "leave --shard-count out where the scheduler gives the count")
            #expect(try Shard.fromScheduler([index: "1", total: "4"], countOverride: 4)?.shard == (try Shard(index: 1, count: 4)))
        }
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
}
