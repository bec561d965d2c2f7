import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a pipeline file without running it.",
            discussion:
                "Checks every key and value, finds the inputs and checks every output path for clashes and escapes. Exits 0 when the "
                + "file is valid, 1 when it is but some inputs or outputs would be refused (each is named), as a run would then fail, "
                + "or when the folder for temporary files cannot hold the plan of the inputs, "
                + "and 2 when it is invalid."
        )

        @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
        var file: String

        @OptionGroup var sharding: ShardOptions

        func run() throws {
            let pipeline = try loadPipeline(file)
            let shard = try sharding.resolve()
            let plan = try exitingOnInvalidFile { () throws(PipelineFileError) in try pipeline.plan(shard: shard?.shard) }
            if let shard { print("shard \(shard.shard) (\(shard.source)): \(plan.inputCount) of \(plan.totalInputCount) inputs") }
            for warning in plan.warnings { printError("warning: \(warning)".escapingControlCharacters) }
            // Inputs, or outputs of an input, a run would refuse (a name too long, a path leaving
            // its folder): the file is valid, but these would fail.
            let refusals = plan.refusals
            for line in refusals { printError(line.escapingControlCharacters) }
            let outputs = pipeline.definition.outputs.count
            // Widths wider than an image are not made for it: with widths, the count is a most.
            // and outputs that choose their inputs are made for some only.
            let most =
                pipeline.definition.outputs.contains { $0.variant?.width != nil || $0.inputSubset != nil } ? "at most " : ""
            let refused = refusals.isEmpty ? "" : "; \(refusals.count) refused (above), which a run would fail"
            print(
                "\(file.escapingControlCharacters): valid: \(plan.inputCount) input\(plan.inputCount == 1 ? "" : "s"), "
                    + "\(most)\(outputs) output\(outputs == 1 ? "" : "s") each\(refused)")
            // As a run would end: a check before one (a CI step) stops at what would fail.
            if !refusals.isEmpty { throw ExitCode.failure }
        }
    }
}
