import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the JSON Schema (draft 2020-12) of pipeline files, for editors (or of manifests, with --manifest)."
        )

        @Flag(help: "Print the schema of the manifest a run writes (\"manifest\" in the pipeline file) instead.")
        var manifest = false

        @Flag(help: "Print the reference of every key (type, default, range, an example) as Markdown instead: docs/pipeline-file.md.")
        var markdown = false

        func validate() throws {
            if manifest && markdown { throw ValidationError("--manifest and --markdown cannot be used together") }
        }

        func run() {
            if markdown { return print(Reference.pipelineFileMarkdown(processors: PipelineCommand.processors), terminator: "") }
            print(manifest ? ImageManifest.jsonSchema : JSONSchemaGenerator.schema(processors: PipelineCommand.processors))
        }
    }
}
