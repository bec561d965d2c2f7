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

        func run() throws {
            let pipeline = try loadPipeline(file)
            print(try exitingOnInvalidFile { () throws(PipelineFileError) in try pipeline.explain() }.text)
        }
    }
}
