import Foundation

/// What a running pipeline reports, in order: `started`, then one `itemCompleted` per input as
/// each finishes, then `finished`.
public enum PipelineEvent: Sendable {
    /// The plan is made and work begins. `outputsPerInput` counts every width × format of an
    /// output with `widths` and `formats`: a most, since widths wider than an image are not made.
    case started(inputs: Int, outputsPerInput: Int, warnings: [String])
    /// An input entered the first stage.
    case itemStarted(InputFile)
    /// A stage finished one operation (for progress, reports and traces).
    case stageFinished(StageOperation)
    /// One input went through every stage (some outputs may have failed: see the report).
    case itemCompleted(ItemReport)
    /// The run is over, completed or cancelled.
    case finished(RunSummary)
}

/// What happened to one input.
public struct ItemReport: Sendable {
    /// The input, as planning found it.
    public let input: InputFile
    /// Outputs written, in the order of the pipeline file's outputs.
    public let written: [WrittenOutput]
    /// What failed: a failure before fan-out fails every output; after it, only its own.
    public let failures: [ItemFailure]
    /// The size the file declares, upright, when decoding got that far.
    public let originalSize: ImageSize?

    /// Whether nothing failed: every output was written or up to date.
    public var succeeded: Bool { failures.isEmpty }
}

/// One output file written.
public struct WrittenOutput: Sendable {
    /// The output's name in the pipeline file.
    public let output: String
    /// The file's path.
    public let path: String
    /// The file's size in pixels.
    public let size: ImageSize
    /// The file's size in bytes.
    public let byteCount: Int
    /// True when an earlier run made this file from the same input and settings, and it was
    /// left as it is (an incremental run).
    public let upToDate: Bool
    /// The format it is encoded in (an output with `formats` writes several), when known.
    public let format: EncoderSettings.Format?
    /// The journal's fingerprint of what made the file (input version and settings), when the
    /// run keeps one: with `byteCount`, what tells this file from another at the same path.
    public let fingerprint: String?
    /// What the encoder left out to write the file (metadata the format cannot hold), one line each naming the input.
    public var warnings: [String]
    /// The quality a quality target's search chose and the file's SSIMULACRA 2 score, when searched.
    public var searchedQuality: SearchedQuality?
    /// The index in the output's `art` of the crop this file is, or nil for the output's own widths.
    public var art: Int? = nil
    /// Whether this is the file `"original"` names, at the image's own width: made by
    /// `"original"`, or by the width that makes the same file. In a set that enlarges, it is
    /// not the widest.
    package var isOriginal = false
    /// How many trial encodes the quality search made, nil when none searched: what a start
    /// from the journal's or a neighbouring width's choice saves.
    var searchEncodes: Int? = nil
    /// The file this run put at `path`, as it was then: what the journal records and the server
    /// answers from. Nil for a file up to date, a pyramid or an object, stamped by their paths.
    package var committed: FileStamp? = nil
    /// The store's name for the version of the object this run put at `path` or found up to
    /// date there (S3's `ETag`): what a server's reads of it are pinned to, so that a version
    /// put since, even one with the same fingerprint and size, is not taken for it.
    package var storedVersion: String? = nil
    /// The input's upright size as the journal or the object's metadata kept it, for a file up
    /// to date of a remote input, which the run did not fetch or decode: what the manifest
    /// needs of an input it has no entry for.
    package var sourceSize: ImageSize? = nil

    /// A file of output `output` at `path`, as the run reports it.
    public init(
        output: String, path: String, size: ImageSize, byteCount: Int, upToDate: Bool = false,
        format: EncoderSettings.Format? = nil, fingerprint: String? = nil, warnings: [String] = [],
        searchedQuality: SearchedQuality? = nil
    ) {
        self.searchedQuality = searchedQuality
        self.output = output
        self.path = path
        self.size = size
        self.byteCount = byteCount
        self.upToDate = upToDate
        self.format = format
        self.fingerprint = fingerprint
        self.warnings = warnings
    }
}

/// One failure of an input, or of one output of it.
public struct ItemFailure: Sendable, CustomStringConvertible {
    /// The input's display name.
    public let input: String
    /// The output that failed, or nil when the whole input failed before fan-out.
    public let output: String?
    /// What failed, in which stage and why.
    public let error: ItemError
    /// Which of the output's files failed, when it makes several (widths, formats, art crops):
    /// `320 px, avif` or `art 1:1, 160 px, webp`; nil otherwise.
    public let file: String?
    /// The format and art crop of the output's file that failed, when an output failed.
    package let format: EncoderSettings.Format?
    package let art: Int?

    /// A failure of `input`, of `output` (its `file`, for an output of several, in `format` and
    /// of the crop `art`) or of the whole input.
    init(
        input: String, output: String?, error: ItemError, file: String? = nil, format: EncoderSettings.Format? = nil, art: Int? = nil
    ) {
        self.input = input
        self.output = output
        self.error = error
        self.file = file
        self.format = format
        self.art = art
    }

    /// The stage that failed.
    public var stage: Stage { error.stage }
    /// Why it failed, in words.
    public var reason: String { error.reason }
    /// The processor step that failed, when it was one.
    public var step: ItemError.Step? { error.step }

    /// `INPUT → OUTPUT (FILE): STAGE: steps[N].NAME: REASON` (the output, file and step when known).
    public var description: String {
        let what = output.map { "\(input) → \($0)" + (file.map { " (\($0))" } ?? "") } ?? input
        return "\(what): \(error)"
    }
}

/// The totals of a run.
public struct RunSummary: Sendable {
    /// How many inputs the run planned.
    public let inputs: Int
    /// Inputs whose every output was written or up to date.
    public let succeeded: Int
    /// Inputs with at least one failure.
    public let failed: Int
    /// Inputs never finished because the run was cancelled, those it left part-made included.
    public let notRun: Int
    /// Files written, those of inputs the run left part-made included.
    public let outputsWritten: Int
    /// The files written for inputs the run left part-made (cancelled between their outputs),
    /// which no `.itemCompleted` report lists: with the reports, every file the run wrote.
    public var partlyMade: [WrittenOutput] { inputsNotRun.flatMap(\.written).filter { !$0.upToDate } }
    /// Each listing of an input a cancelled run did not finish, in the plan's order, with the
    /// files it had made or found up to date when it was cut short: what is left to do.
    public internal(set) var inputsNotRun: [NotRunInput] = []
    /// Outputs left as they were because nothing that makes them changed.
    public let outputsUpToDate: Int
    /// The run's wall time.
    public let elapsed: Duration
    /// Whether the run was cancelled before every input was done.
    public let cancelled: Bool
    /// The most inputs that were between the first stage and the last at once (≤ `inFlight`).
    public let peakInFlight: Int
    /// Why the manifest the pipeline file asks for could not be written, or nil (written, or
    /// none asked for). A cancelled run writes it too: the entries of the inputs it finished,
    /// none for an input it left part-made, and the others as they were.
    public internal(set) var manifestProblem: String? = nil
    /// Of a shard's run, what every shard of its run has in common, which its report records.
    public internal(set) var batch: RunBatch? = nil
    /// What could not be written beside the outputs (the journal of incremental runs, the cache
    /// of fetched inputs), each naming the file and the system's reason. A warning, not a
    /// failure: every output counted as written is in place, and the next run makes again what
    /// was not recorded or fetches again what was not cached.
    public internal(set) var warnings: [String] = []
    /// The memory budget the run kept to, and the most its admitted inputs' estimates came to at
    /// once; nil when no limit was known.
    public internal(set) var memory: Memory? = nil
    /// Remote inputs whose server could not be reached or failed, made from their cached copy
    /// instead (`fetch.staleIfError`).
    public internal(set) var inputsServedStale = 0

    /// An input a cancelled run did not finish.
    public struct NotRunInput: Sendable {
        /// Its display name, as its report would have named it.
        public let input: String
        /// The files its outputs had when the run was cut short (none for one never started).
        public let written: [WrittenOutput]
    }

    /// How a run with a memory limit used it.
    public struct Memory: Sendable, Equatable {
        /// The budget: the limit, where it came from, and the bytes left for images.
        public let budget: MemoryBudget
        /// The most bytes the estimates of inputs being made came to at once (≤ `budget.bytes`).
        public let peakAdmittedBytes: Int64
    }

    /// `elapsed` in seconds.
    public var seconds: Double { elapsed.seconds }

    /// Inputs finished (succeeded or failed) per second of wall time; 0 before any time passed.
    public var imagesPerSecond: Double {
        seconds > 0 ? Double(succeeded + failed) / seconds : 0
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
