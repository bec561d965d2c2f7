import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the JSON Schema (draft 2020-12) of pipeline files, for editors (or of manifests with --manifest, of --json lines with --events)."
        )

        @Flag(help: "Print the schema of the manifest a run writes (\"manifest\" in the pipeline file) instead.")
        var manifest = false

        @Flag(help: "Print the schema of one line `pipeline run --json` prints instead.")
        var events = false

        @Flag(help: "Print the reference of every key (type, default, range, an example) as Markdown instead: docs/pipeline-file.md.")
        var markdown = false

        func validate() throws {
            let chosen = [("--manifest", manifest), ("--events", events), ("--markdown", markdown)].filter(\.1).map(\.0)
            if chosen.count > 1 { throw ValidationError("\(chosen.joined(separator: " and ")) cannot be used together") }
        }

        func run() {
            if markdown { return print(Reference.pipelineFileMarkdown(processors: PipelineCommand.processors), terminator: "") }
            if events { return print(RunEventLines.jsonSchema) }
            print(manifest ? ImageManifest.jsonSchema : JSONSchemaGenerator.schema(processors: PipelineCommand.processors))
        }
    }
}
