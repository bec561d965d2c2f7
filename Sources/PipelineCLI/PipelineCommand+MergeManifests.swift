import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct MergeManifests: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge-manifests",
            abstract: "Join the manifests a sharded run's shards wrote into the one the pipeline file names.",
            discussion:
                "Each shard of a sharded run writes its manifest beside the one the file names (manifest.shard-2-of-4.json); "
                + "this writes that one, as a run over every input would have. Exit status 0 when it was written, 1 when a "
                + "shard's manifest is missing or not what its shard makes now (nothing is written), 2 when the file names no manifest or the shards' "
                + "manifests cannot be joined."
        )

        @Argument(help: "The pipeline file (JSON) the shards ran.", completion: .file(extensions: ["json"]))
        var file: String

        func run() async throws {
            let pipeline = try loadPipeline(file)
            guard let settings = pipeline.definition.manifest else {
                printError("error: \(file): the file asks for no manifest (\"manifest\": {\"path\": …})")
                throw ExitCode.invalidInput
            }
            let shards: ShardManifests
            do {
                shards = try ShardManifests.find(beside: settings)
            } catch {
                printError("error: \(error.description.escapingControlCharacters)")
                throw ExitCode.invalidInput
            }
            // Each shard's manifest is checked against the inputs the file finds now, so that one
            // left from an earlier run (its shard did not run this time) is not joined as current.
            let plan = try exitingOnInvalidFile { () throws(PipelineFileError) in try pipeline.plan() }
            let inputs: Int
            do {
                inputs = try shards.write(
                    pipeline: pipeline.definition.name, current: ShardManifests.CurrentInputs(plan: plan, count: shards.count))
            } catch {
                // One line for each shard out of date.
                for line in error.lines { printError("error: \(line.escapingControlCharacters)") }
                throw shards.missing.isEmpty && !error.isStale ? ExitCode.invalidInput : ExitCode.someItemsFailed
            }
            print(
                "merged the manifests of \(shards.count) shard\(shards.count == 1 ? "" : "s"): "
                    + "\(inputs) input\(inputs == 1 ? "" : "s") → \(settings.file.path.escapingControlCharacters)")
        }
    }
}
