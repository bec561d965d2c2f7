import Foundation

/// The lines `pipeline run --json` and `pipeline watch --json` print: one JSON object per line,
/// each with an `event` naming its kind. `jsonSchema` describes every kind; a test validates a
/// real run's lines against it, so the two cannot drift apart.
public enum RunEventLines {
    /// The lines one `PipelineEvent` becomes, in order (an input's completion also prints its
    /// failures and warnings). `outputFolder` and `firstOutput` say where a finished run's
    /// outputs are, as the summary does.
    public static func lines(
        for event: PipelineEvent, outputFolder: String? = nil, firstOutput: String? = nil
    ) -> [any Encodable & Sendable] {
        switch event {
        case .started(let inputs, let outputs, let warnings):
            [RunStarted(inputs: inputs, outputsPerInput: outputs, warnings: warnings)]
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
    public static func encoded(_ line: any Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(line)
    }

    /// `runStarted`: the plan is made.
    public struct RunStarted: Encodable, Sendable {
        /// The kind of line.
        public let event = "runStarted"
        /// How many inputs the run planned.
        public let inputs: Int
        /// Files per input at most (every width × format).
        public let outputsPerInput: Int
        /// What planning warned of.
        public let warnings: [String]
    }

    /// `itemStarted`: an input entered the first stage.
    public struct ItemStarted: Encodable, Sendable {
        /// The kind of line.
        public let event = "itemStarted"
        /// The input's display name.
        public let input: String
    }

    /// `stageFinished`: one stage finished one operation.
    public struct StageFinished: Encodable, Sendable {
        /// The kind of line.
        public let event = "stageFinished"
        /// The stage's name (`fetch`, `decode`, …).
        public let stage: String
        /// The input's display name.
        public let input: String
        /// The output, for stages after fan-out.
        public let output: String?
        /// When the operation started, in seconds since the run started.
        public let start: Double
        /// How long it ran.
        public let seconds: Double
        /// How long it waited for a lane.
        public let waited: Double
        /// The lane that ran it.
        public let lane: Int
        /// Whether it succeeded.
        public let succeeded: Bool

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
    public struct ItemFailed: Encodable, Sendable {
        /// The kind of line.
        public let event = "itemFailed"
        /// The input's display name.
        public let input: String
        /// The output that failed, or nil when the whole input failed.
        public let output: String?
        /// The stage that failed.
        public let stage: String
        /// The kind of failure, for programs (`processing`, `httpStatus`, …).
        public let kind: String
        /// Why, in words.
        public let reason: String
        /// The processor step that failed, when it was one.
        public let step: Step?

        /// A step by its place in `steps` and its name.
        public struct Step: Encodable, Sendable {
            /// Its index in the output's `steps`.
            public let index: Int
            /// The processor's name.
            public let name: String
        }

        init(_ failure: ItemFailure) {
            input = failure.input
            output = failure.output
            stage = failure.stage.rawValue
            kind = failure.error.kind.description
            reason = failure.reason
            step = failure.step.map { Step(index: $0.index, name: $0.name) }
        }
    }

    /// `warning`: what an encoder left out of a file.
    public struct WarningLine: Encodable, Sendable {
        /// The kind of line.
        public let event = "warning"
        /// The input's display name.
        public let input: String
        /// The warning, naming the input.
        public let message: String
    }

    /// `itemCompleted`: an input went through every stage.
    public struct ItemCompleted: Encodable, Sendable {
        /// The kind of line.
        public let event = "itemCompleted"
        /// The input's display name.
        public let input: String
        /// `succeeded` or `failed`.
        public let status: String
        /// The files written or up to date.
        public let outputs: [Output]

        /// One file.
        public struct Output: Encodable, Sendable {
            /// The output's name in the pipeline file.
            public let name: String
            /// The file's path.
            public let path: String
            /// Its size in pixels.
            public let width, height: Int
            /// Its size in bytes.
            public let bytes: Int
            /// Whether an earlier run made it and it was left as it is.
            public let upToDate: Bool
            /// The quality a quality target chose, when searched.
            public let quality: Int?
            /// The file's SSIMULACRA 2 score, when searched.
            public let ssimulacra2: Double?
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
    public struct RunFinished: Encodable, Sendable {
        /// The kind of line.
        public let event = "runFinished"
        /// Inputs planned, succeeded, failed, and never finished because the run was cancelled.
        public let inputs, succeeded, failed, notRun: Int
        /// Files written, and files left as they were.
        public let outputsWritten, outputsUpToDate: Int
        /// The wall time.
        public let seconds: Double
        /// Inputs finished per second.
        public let imagesPerSecond: Double
        /// Whether the run was cancelled.
        public let cancelled: Bool
        /// Remote inputs made from their cached copy (`fetch.staleIfError`).
        public let inputsServedStale: Int
        /// What could not be written beside the outputs; absent when nothing.
        public let warnings: [String]?
        /// The folder that holds every output, when there is one.
        public let outputFolder: String?
        /// The first output, when there is one.
        public let firstOutput: String?
        /// The memory budget kept to, when a limit was known.
        public let memory: Memory?

        /// How the run used its memory limit.
        public struct Memory: Encodable, Sendable {
            /// The bytes left for images.
            public let budgetBytes: Int64
            /// The limit.
            public let limitBytes: Int64
            /// Where the limit came from.
            public let source: String
            /// The most the admitted inputs' estimates came to at once.
            public let peakAdmittedBytes: Int64
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
