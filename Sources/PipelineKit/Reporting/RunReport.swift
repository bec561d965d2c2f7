import Foundation

/// What a run did, input by input and stage by stage: the content of `report.json`, built from
/// a run's events by `RunRecorder`.
public struct RunReport: Sendable, Codable {
    /// One file an output made of an input, or the failure that kept it from being made.
    public struct Output: Sendable, Codable {
        /// The output's name in the pipeline file.
        public var name: String
        /// The file written, or nil when it failed.
        public var path: String?
        /// Whether the file was made.
        public var status: Status
        /// Why it was not, when it failed.
        public var error: String?
        /// What kind of failure (`ItemError.Kind`'s name: `processing`, `httpStatus`, …), for programs.
        public var kind: String? = nil
        /// The stage that failed, when it failed.
        public var stage: Stage?
        /// The processor step that failed, when it was one.
        public var step: ItemError.Step?
        /// The file's width in pixels, when it was made.
        public var width: Int?
        /// The file's height in pixels, when it was made.
        public var height: Int?
        /// The file's size in bytes, when it was made.
        public var bytes: Int?
        /// The format it is encoded in (`webp`, `avif`, …).
        public var format: String
        /// True when an earlier run made the file and it was left as it was.
        public var upToDate: Bool?
        /// The quality a quality target's search chose; nil for a fixed quality.
        public var quality: Int? = nil
        /// The file's SSIMULACRA 2 score when a quality target's search chose its quality.
        public var ssimulacra2: Double? = nil
        /// The score the quality target asked for, when searched: above `ssimulacra2` when no
        /// quality the search could choose reached it, and the file is the best it found.
        public var ssimulacra2Target: Double? = nil
        /// Which of the output's files failed, when it failed and makes several (widths,
        /// formats, art crops): `320 px, avif`.
        public var file: String? = nil
        /// What the run warned of for this file, each line naming the input: a quality target
        /// the search fell short of, metadata the format cannot hold. Nil when there was none.
        public var warnings: [String]? = nil
    }

    /// One input: how it went, and each of its outputs.
    public struct Item: Sendable, Codable {
        /// The input's display name, as the pipeline file or the enumeration named it.
        public var input: String
        /// Whether every output of the input was made, or the run was cancelled before it was
        /// finished (`notRun`, listed after the others).
        public var status: Status
        /// The failure that stopped the whole input before its outputs, if any.
        public var error: String?
        /// What kind of failure that was (`ItemError.Kind`'s name), for programs.
        public var kind: String? = nil
        /// The stage of that failure.
        public var stage: Stage?
        /// The input's width in pixels, upright, when it was decoded.
        public var width: Int?
        /// The input's height in pixels, upright, when it was decoded.
        public var height: Int?
        /// The input's size in bytes, when known (local files).
        public var bytes: Int64?
        /// Seconds worked in each stage for this input (queue waits not included).
        public var stageSeconds: [String: Double]
        /// What each of the pipeline's outputs made of it.
        public var outputs: [Output]
    }

    /// Whether an input or an output was made.
    public enum Status: String, Sendable, Codable {
        /// `succeeded`: made (or up to date); `failed`: an error stopped it; `notRun`: an input
        /// the run was cancelled before it finished.
        case succeeded, failed, notRun
    }

    /// Totals of one stage.
    public struct StageTotals: Sendable, Codable {
        /// The stage these totals are of.
        public var stage: Stage
        /// How many lanes the stage had.
        public var concurrency: Int
        /// How many operations it ran.
        public var operations: Int
        /// Seconds its lanes worked, summed.
        public var busySeconds: Double
        /// Seconds operations waited for a free lane, summed.
        public var waitSeconds: Double
    }

    /// The pipeline's name.
    public var pipeline: String
    /// The version of pipeline that made the report.
    public var version: String
    /// When the run started.
    public var startedAt: Date
    /// The run's wall time, in seconds.
    public var elapsedSeconds: Double
    /// How many inputs the run planned.
    public var inputs: Int
    /// Inputs whose every output was made or up to date.
    public var succeeded: Int
    /// Inputs with at least one failure.
    public var failed: Int
    /// Inputs never finished because the run was cancelled.
    public var notRun: Int
    /// Files written.
    public var outputsWritten: Int
    /// Files an earlier run made from the same input and settings, left as they were.
    public var outputsUpToDate: Int
    /// Whether the run was cancelled (Ctrl-C, SIGTERM) before every input was done.
    public var cancelled: Bool
    /// Each stage's totals, in the order the stages run.
    public var stages: [StageTotals]
    /// Every input, in the order they finished; then, of a cancelled run, those not finished.
    public var items: [Item]
    /// The shard this run made, when it made one (`pipeline run --shard`); merged reports have none.
    public var shard: ShardInfo? = nil
    /// Of a merged report, the shards (their indices, of `ShardInfo.count` shards) whose reports
    /// were not given: the report is not of the whole run. Nil when none is missing.
    public var missingShards: [Int]? = nil
    /// The memory budget the run kept to, when a limit was known.
    public var memory: MemoryInfo? = nil
    /// What the run warned of that is of no one input: entries an input's pattern skipped,
    /// files it could not write beside the outputs. Nil when there was none.
    public var warnings: [String]? = nil

    /// The memory limit of a run and how much of it the inputs being made were estimated to hold.
    public struct MemoryInfo: Sendable, Codable, Equatable {
        /// Bytes for images: the limit less what the process used at the start and a reserve.
        public var budgetBytes: Int64
        /// The memory limit itself, in bytes.
        public var limitBytes: Int64
        /// `--max-memory`, `cgroup v2 memory.max (…)`, `RLIMIT_AS (ulimit -v)`.
        public var source: String
        /// The most the estimates of the inputs being made came to at once.
        public var peakAdmittedBytes: Int64
    }

    /// Which part of a sharded run a report covers.
    public struct ShardInfo: Sendable, Codable, Equatable {
        /// The shard's number, from 0.
        public var index: Int
        /// How many shards the run was split into.
        public var count: Int
        /// What every shard of the run has in common; nil in the reports of versions before it.
        public var batch: RunBatch? = nil
    }
}

extension RunReport.ShardInfo {
    /// What a report and `--json` say of `shard`, of the run whose shards have `batch` in common.
    init(_ shard: Shard, batch: RunBatch? = nil) {
        self.init(index: shard.index, count: shard.count, batch: batch)
    }
}
