import ArgumentParser
import Foundation
import PipelineKit

/// `--shard` and `--shard-count`, shared by `run`, `validate` and `explain`: which part of the
/// inputs this process makes when a scheduler spreads a run over machines.
struct ShardOptions: ParsableArguments {
    // Unconditional: a value such as -1/3 is the option's value (then refused for what it is), not another option.
    @ArgumentParser.Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Make only shard INDEX of COUNT (from 0): every input belongs to one shard, by its identity alone. Without it, the shard comes from the scheduler's variables (Kubernetes, Slurm, AWS Batch, Cloud Run), if any.",
            valueName: "INDEX/COUNT"))
    var shard: String?

    @ArgumentParser.Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The number of shards, where the scheduler does not say it (a Kubernetes Indexed Job's completions).", valueName: "count"))
    var shardCount: Int?

    /// The shard this process makes, and where it came from; nil for the whole run.
    func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Shard.Found? {
        if let shard, let shardCount {
            printError("error: --shard \(shard) gives its count; --shard-count \(shardCount) is for a scheduler's index")
            throw ExitCode.invalidInput
        }
        do throws(ShardError) {
            if let shard {
                return Shard.Found(shard: try Shard(parsing: shard), source: "--shard \(shard)")
            }
            return try Shard.fromScheduler(environment, countOverride: shardCount)
        } catch {
            printError("error: \(error.description)")
            throw ExitCode.invalidInput
        }
    }
}
