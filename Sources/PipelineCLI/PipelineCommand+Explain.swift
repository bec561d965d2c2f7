import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Explain: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what a run would do, without running it.",
            discussion: "Inputs found and their formats and sizes (from headers only), outputs per input, stage widths, the decode scale shrink-on-load will use, the in-flight bound and an estimate of peak memory."
        )

        @Argument(help: "The pipeline file (JSON).")
        var file: String

        @OptionGroup var sharding: ShardOptions

        func run() throws {
            let pipeline = try loadPipeline(file)
            let shard = try sharding.resolve()
            print(try exitingOnInvalidFile { () throws(PipelineFileError) in
                try pipeline.explain(shard: shard?.shard, shardSource: shard?.source)
            }.text)
        }
    }
}
