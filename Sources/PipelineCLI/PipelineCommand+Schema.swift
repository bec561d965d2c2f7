import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the JSON Schema (draft 2020-12) of pipeline files, for editors."
        )

        func run() {
            print(JSONSchemaGenerator.schema(processors: PipelineCommand.processors))
        }
    }
}
