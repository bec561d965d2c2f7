import Foundation

/// The lines `pipeline run --json` and `pipeline watch --json` print: one JSON object per line,
/// each with an `event` naming its kind. `jsonSchema` describes every kind; a test validates a
/// real run's lines against it, so the two cannot drift apart.
package enum RunEventLines {
    /// The lines one `PipelineEvent` becomes, in order (an input's completion also prints its
    /// failures and warnings). `shard` is the run's, when it is one; `outputFolder` and
    /// `firstOutput` say where a finished run's outputs are, as the summary does.
    package static func lines(
        for event: PipelineEvent, shard: Shard? = nil, outputFolder: String? = nil, firstOutput: String? = nil
    ) -> [any Encodable & Sendable] {
        switch event {
        case .started(let inputs, let outputs, let warnings):
            [RunStarted(inputs: inputs, outputsPerInput: outputs, warnings: warnings, shard: shard.map { RunReport.ShardInfo($0) })]
        case .itemStarted(let input):
            [ItemStarted(input: input.displayName)]
        case .stageFinished(let operation):
            [StageFinished(operation)]
        case .itemCompleted(let report):
            report.failures.map(ItemFailed.init)
                + report.written.flatMap(\.warnings).map { WarningLine(input: report.input.displayName, message: $0) }
                + [ItemCompleted(report)]
        case .finished(let summary):
            [RunFinished(summary, outputFolder: outputFolder, firstOutput: firstOutput)]
        }
    }

    /// One line's JSON: sorted keys, slashes as they are, no newline.
    package static func encoded(_ line: any Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(line)
    }

    /// `runStarted`: the plan is made.
    package struct RunStarted: Encodable, Sendable {
        /// The kind of line.
        package let event = "runStarted"
        /// How many inputs the run planned.
        package let inputs: Int
        /// Files per input at most (every width × format).
        package let outputsPerInput: Int
        /// What planning warned of.
        package let warnings: [String]
        /// The shard the run makes, when it is one (left out otherwise): a scheduler's tasks
        /// may print their lines to one log.
        package let shard: RunReport.ShardInfo?
    }

    /// `itemStarted`: an input entered the first stage.
    package struct ItemStarted: Encodable, Sendable {
        /// The kind of line.
        package let event = "itemStarted"
        /// The input's display name.
        package let input: String
    }

    /// `stageFinished`: one stage finished one operation.
    package struct StageFinished: Encodable, Sendable {
        /// The kind of line.
        package let event = "stageFinished"
        /// The stage's name (`fetch`, `decode`, …).
        package let stage: String
        /// The input's display name.
        package let input: String
        /// The output, for stages after fan-out.
        package let output: String?
        /// When the operation started, in seconds since the run started.
        package let start: Double
        /// How long it ran.
        package let seconds: Double
        /// How long it waited for a lane.
        package let waited: Double
        /// The lane that ran it.
        package let lane: Int
        /// Whether it succeeded.
        package let succeeded: Bool

        init(_ operation: StageOperation) {
            stage = operation.stage.rawValue
            input = operation.input
            output = operation.output
            start = operation.startedAt
            seconds = operation.duration
            waited = operation.waited
            lane = operation.lane
            succeeded = operation.succeeded
        }
    }

    /// `itemFailed`: an input, or one output of it, failed.
    package struct ItemFailed: Encodable, Sendable {
        /// The kind of line.
        package let event = "itemFailed"
        /// The input's display name.
        package let input: String
        /// The output that failed, or nil when the whole input failed.
        package let output: String?
        /// Which of the output's files failed, when it makes several (`320 px, avif`).
        package let file: String?
        /// The stage that failed.
        package let stage: String
        /// The kind of failure, for programs (`processing`, `httpStatus`, …).
        package let kind: String
        /// Why, in words.
        package let reason: String
        /// The processor step that failed, when it was one.
        package let step: Step?

        /// A step by its place in `steps` and its name.
        package struct Step: Encodable, Sendable {
            /// Its index in the output's `steps`.
            package let index: Int
            /// The processor's name.
            package let name: String
        }

        init(_ failure: ItemFailure) {
            input = failure.input
            output = failure.output
            file = failure.file
            stage = failure.stage.rawValue
            kind = failure.error.kind.description
            reason = failure.reason
            step = failure.step.map { Step(index: $0.index, name: $0.name) }
        }
    }

    /// `warning`: what an encoder left out of a file.
    package struct WarningLine: Encodable, Sendable {
        /// The kind of line.
        package let event = "warning"
        /// The input's display name.
        package let input: String
        /// The warning, naming the input.
        package let message: String
    }

    /// `itemCompleted`: an input went through every stage.
    package struct ItemCompleted: Encodable, Sendable {
        /// The kind of line.
        package let event = "itemCompleted"
        /// The input's display name.
        package let input: String
        /// `succeeded` or `failed`.
        package let status: String
        /// The files written or up to date.
        package let outputs: [Output]

        /// One file.
        package struct Output: Encodable, Sendable {
            /// The output's name in the pipeline file.
            package let name: String
            /// The file's path.
            package let path: String
            /// Its size in pixels.
            package let width, height: Int
            /// Its size in bytes.
            package let bytes: Int
            /// Whether an earlier run made it and it was left as it is.
            package let upToDate: Bool
            /// The quality a quality target chose, when searched.
            package let quality: Int?
            /// The file's SSIMULACRA 2 score, when searched.
            package let ssimulacra2: Double?
        }

        init(_ report: ItemReport) {
            input = report.input.displayName
            status = report.succeeded ? "succeeded" : "failed"
            outputs = report.written.map {
                Output(
                    name: $0.output, path: $0.path, width: $0.size.width, height: $0.size.height, bytes: $0.byteCount,
                    upToDate: $0.upToDate, quality: $0.searchedQuality?.quality, ssimulacra2: $0.searchedQuality?.score)
            }
        }
    }

    /// `runFinished`: the run's totals.
    package struct RunFinished: Encodable, Sendable {
        /// The kind of line.
        package let event = "runFinished"
        /// Inputs planned, succeeded, failed, and never finished because the run was cancelled.
        package let inputs, succeeded, failed, notRun: Int
        /// Files written, and files left as they were.
        package let outputsWritten, outputsUpToDate: Int
        /// The wall time.
        package let seconds: Double
        /// Inputs finished per second.
        package let imagesPerSecond: Double
        /// Whether the run was cancelled.
        package let cancelled: Bool
        /// Remote inputs made from their cached copy (`fetch.staleIfError`).
        package let inputsServedStale: Int
        /// What could not be written beside the outputs; absent when nothing.
        package let warnings: [String]?
        /// Why the manifest could not be written (the run then exits 1); absent when it was, or
        /// the file asks for none.
        package let manifestProblem: String?
        /// The folder that holds every output, when there is one.
        package let outputFolder: String?
        /// The first output, when there is one.
        package let firstOutput: String?
        /// The memory budget kept to, when a limit was known.
        package let memory: Memory?

        /// How the run used its memory limit.
        package struct Memory: Encodable, Sendable {
            /// The bytes left for images.
            package let budgetBytes: Int64
            /// The limit.
            package let limitBytes: Int64
            /// Where the limit came from.
            package let source: String
            /// The most the admitted inputs' estimates came to at once.
            package let peakAdmittedBytes: Int64
        }

        init(_ summary: RunSummary, outputFolder: String?, firstOutput: String?) {
            inputs = summary.inputs
            succeeded = summary.succeeded
            failed = summary.failed
            notRun = summary.notRun
            outputsWritten = summary.outputsWritten
            outputsUpToDate = summary.outputsUpToDate
            seconds = summary.seconds
            imagesPerSecond = summary.imagesPerSecond
            cancelled = summary.cancelled
            inputsServedStale = summary.inputsServedStale
            warnings = summary.warnings.isEmpty ? nil : summary.warnings
            manifestProblem = summary.manifestProblem
            self.outputFolder = outputFolder
            self.firstOutput = firstOutput
            memory = summary.memory.map {
                Memory(
                    budgetBytes: $0.budget.bytes, limitBytes: $0.budget.limit, source: $0.budget.source,
                    peakAdmittedBytes: $0.peakAdmittedBytes)
            }
        }
    }
}
