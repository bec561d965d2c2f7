import Foundation

/// What a run did, input by input and stage by stage: the content of `report.json`, built from
/// a run's events by `RunRecorder`.
public struct RunReport: Sendable, Codable {
    public struct Output: Sendable, Codable {
        public var name: String
        public var path: String?
        public var status: Status
        public var error: String?
        /// What kind of failure (`ItemError.Kind`'s name: `processing`, `httpStatus`, …), for programs.
        public var kind: String? = nil
        public var stage: Stage?
        /// The processor step that failed, when it was one.
        public var step: ItemError.Step?
        public var width: Int?
        public var height: Int?
        public var bytes: Int?
        public var format: String
        /// True when an earlier run made the file and it was left as it was.
        public var upToDate: Bool?
        /// The quality a quality target's search chose, and the file's SSIMULACRA 2 score.
        public var quality: Int? = nil
        public var ssimulacra2: Double? = nil
    }

    public struct Item: Sendable, Codable {
        public var input: String
        public var status: Status
        /// The failure that stopped the whole input before its outputs, if any.
        public var error: String?
        /// What kind of failure that was (`ItemError.Kind`'s name), for programs.
        public var kind: String? = nil
        public var stage: Stage?
        public var width: Int?
        public var height: Int?
        /// The input's size in bytes, when known (local files).
        public var bytes: Int64?
        /// Seconds worked in each stage for this input (queue waits not included).
        public var stageSeconds: [String: Double]
        public var outputs: [Output]
    }

    public enum Status: String, Sendable, Codable {
        case succeeded, failed
    }

    /// Totals of one stage.
    public struct StageTotals: Sendable, Codable {
        public var stage: Stage
        public var concurrency: Int
        public var operations: Int
        /// Seconds its lanes worked, summed.
        public var busySeconds: Double
        /// Seconds operations waited for a free lane, summed.
        public var waitSeconds: Double
    }

    public var pipeline: String
    public var version: String
    public var startedAt: Date
    public var elapsedSeconds: Double
    public var inputs: Int
    public var succeeded: Int
    public var failed: Int
    public var notRun: Int
    public var outputsWritten: Int
    public var outputsUpToDate: Int
    public var cancelled: Bool
    public var stages: [StageTotals]
    public var items: [Item]
    /// The shard this run made, when it made one (`pipeline run --shard`); merged reports have none.
    public var shard: ShardInfo? = nil
    /// The memory budget the run kept to, when a limit was known.
    public var memory: MemoryInfo? = nil

    /// The memory limit of a run and how much of it the inputs being made were estimated to hold.
    public struct MemoryInfo: Sendable, Codable, Equatable {
        /// Bytes for images: the limit less what the process used at the start and a reserve.
        public var budgetBytes: Int64
        public var limitBytes: Int64
        /// `--max-memory`, `cgroup v2 memory.max (…)`, `RLIMIT_AS (ulimit -v)`.
        public var source: String
        /// The most the estimates of the inputs being made came to at once.
        public var peakAdmittedBytes: Int64
    }

    /// Which part of a sharded run a report covers.
    public struct ShardInfo: Sendable, Codable, Equatable {
        public var index: Int
        public var count: Int
    }
}
