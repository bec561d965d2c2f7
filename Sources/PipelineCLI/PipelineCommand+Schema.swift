import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the JSON Schema (draft 2020-12) of pipeline files, for editors (or of manifests, with --manifest)."
        )

        @Flag(help: "Print the schema of the manifest a run writes (\"manifest\" in the pipeline file) instead.")
        var manifest = false

        func run() {
            print(manifest ? ImageManifest.jsonSchema : JSONSchemaGenerator.schema(processors: PipelineCommand.processors))
        }
    }
}
