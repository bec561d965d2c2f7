import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a pipeline file without running it.",
            discussion: "Checks every key and value, finds the inputs and checks every output path for clashes and escapes."
        )

        @Argument(help: "The pipeline file (JSON).")
        var file: String

        func run() throws {
            let pipeline = try loadPipeline(file)
            let plan = try exitingOnInvalidFile { () throws(PipelineFileError) in try pipeline.plan() }
            for warning in plan.warnings { printError("warning: \(warning)".escapingControlCharacters) }
            // Inputs a run would refuse (a name too long, a path leaving its folder): the file is
            // valid, but these inputs would fail.
            for listing in plan.items.flatMap(\.listings) {
                if let refusal = listing.refusal { printError("\(listing.input.displayName): \(refusal)".escapingControlCharacters) }
            }
            let outputs = pipeline.definition.outputs.count
            print("\(file.escapingControlCharacters): valid: \(plan.inputCount) input\(plan.inputCount == 1 ? "" : "s"), "
                + "\(outputs) output\(outputs == 1 ? "" : "s") each")
        }
    }
}
