import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Explain: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what a run would do, without running it.",
            discussion:
                "Inputs found and their formats and sizes (from headers only), outputs per input, stage widths, the decode scale shrink-on-load will use, the in-flight bound, an estimate of peak memory, and the memory budget and where it comes from (--max-memory, the cgroup's limit, ulimit -v)."
        )

        @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
        var file: String

        @OptionGroup var sharding: ShardOptions
        @OptionGroup var memory: MemoryOptions

        func run() throws {
            var pipeline = try loadPipeline(file)
            memory.apply(to: &pipeline)
            let shard = try sharding.resolve()
            let explanation = try exitingOnInvalidFile { () throws(PipelineFileError) in
                try pipeline.explain(shard: shard?.shard, shardSource: shard?.source)
            }
            // As `validate` and `run` print them: explain is where one looks for a missing input.
            for warning in explanation.warnings { printError("warning: \(warning)".escapingControlCharacters) }
            print(explanation.text)
            if !explanation.refusals.isEmpty {
                print("refused before any work, which a run fails (exit 1):")
                for line in explanation.refusals { print("  " + line.escapingControlCharacters) }
            }
            // The budget is shown above as any other; the commands that run refuse it outright.
            do { try memory.checkRoomForImages() } catch { print("refused by run, watch and serve (exit 2): \(error)") }
            if pipeline.definition.serve != ServeSettings() { print(Self.describe(pipeline.definition.serve)) }
        }

        /// The `serve` section, in a line: every setting, the signing key only as whether there is one.
        static func describe(_ serve: ServeSettings) -> String {
            let cacheControl = serve.cacheControl.map { "Cache-Control \"\($0)\"" } ?? "no Cache-Control"
            var parts = [
                cacheControl.escapingControlCharacters, "at most \(serve.maxConnections) connections at once",
                "\(serve.maxQueue) inputs waiting to be made", serve.signing == nil ? "URLs not signed" : "URLs signed (serve.key)",
            ]
            if serve.clientHints { parts.append("client hints asked for") }
            if let fallback = serve.fallback {
                parts.append("\(fallback.file.path.escapingControlCharacters) answered for an input that cannot be decoded")
            }
            parts.append("\(Units.text(seconds: serve.timeout)) for a file to be made")
            parts.append("\(Units.text(seconds: serve.drainTimeout)) to drain at SIGTERM")
            return "pipeline serve: " + parts.joined(separator: ", ")
        }
    }
}
