import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a pipeline file without running it.",
            discussion: "Checks every key and value, finds the inputs and checks every output path for clashes and escapes."
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
            var refusals = 0
            for item in plan.items {
                for listing in item.listings {
                    let name = listing.input.displayName
                    let lines =
                        listing.refusal.map { ["\(name): \($0)"] }
                        ?? listing.refusedOutputs.map { "\(name) → \(listing.targets[$0.index].outputDescription): \($0.failureReason)" }
                    for line in lines { printError(line.escapingControlCharacters) }
                    refusals += lines.count
                }
            }
            let outputs = pipeline.definition.outputs.count
            // Widths wider than an image are not made for it: with widths, the count is a most.
            // and outputs that choose their inputs are made for some only.
            let most =
                pipeline.definition.outputs.contains { $0.variant?.width != nil || $0.inputSubset != nil } ? "at most " : ""
            let refused = refusals == 0 ? "" : "; \(refusals) refused (above)"
            print(
                "\(file.escapingControlCharacters): valid: \(plan.inputCount) input\(plan.inputCount == 1 ? "" : "s"), "
                    + "\(most)\(outputs) output\(outputs == 1 ? "" : "s") each\(refused)")
        }
    }
}
