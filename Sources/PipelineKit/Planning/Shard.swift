import Foundation

/// One part of a run spread over several machines (or processes) by a scheduler: shard `index`
/// of `count`, counted from 0.
///
/// An input's shard depends on its identity alone (its URL, or its path relative to the
/// pipeline file's folder, resolved through symbolic links), never on its place in a listing or
/// on the other inputs: adding inputs never moves existing ones to another shard, every input
/// is in exactly one shard, and a source listed twice stays in one shard. Machines share nothing
/// but the storage: no coordinator.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// This shard's number, from 0.
    public let index: Int
    /// How many shards the inputs are split into.
    public let count: Int

    /// Shard `index` (from 0) of `count`.
    public init(index: Int, count: Int) throws(ShardError) {
        guard count >= 1 else { throw ShardError("the shard count must be at least 1, not \(count)") }
        guard (0..<count).contains(index) else {
            throw ShardError("shard index \(index) is not between 0 and \(count - 1) (the count is \(count))")
        }
        self.index = index
        self.count = count
    }

    /// `INDEX/COUNT`, for example `0/4` for the first of four.
    public init(parsing text: String) throws(ShardError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ShardError("\"\(text)\" is not INDEX/COUNT, for example 0/4 for the first of four shards")
        }
        try self.init(index: index, count: count)
    }

    /// `2/4`.
    public var description: String { "\(index)/\(count)" }

    /// Whether the input whose identity is `key` belongs to this shard.
    public func contains(key: String) -> Bool {
        Self.shard(of: key, count: count) == index
    }

    /// The shard, of `count`, that the identity `key` belongs to.
    public static func shard(of key: String, count: Int) -> Int {
        // FNV-1a spreads similar names poorly in its low bits; a splitmix64 finaliser mixes them.
        var hash = FNV1a.hash(Data(key.utf8))
        hash ^= hash >> 30
        hash &*= 0xbf58_476d_1ce4_e5b9
        hash ^= hash >> 27
        hash &*= 0x94d0_49bb_1331_11eb
        hash ^= hash >> 31
        return Int(hash % UInt64(count))
    }
}

/// A shard given wrongly, on the command line or by a scheduler's variables.
public struct ShardError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the option or variables.
    public let description: String
    init(_ description: String) { self.description = description }
}

extension Shard {
    /// Where a shard came from: the command line, or which scheduler's variables.
    public struct Found: Sendable {
        /// The shard.
        public let shard: Shard
        /// For example `SLURM_ARRAY_TASK_ID=3 - SLURM_ARRAY_TASK_MIN=1 of SLURM_ARRAY_TASK_COUNT=4`.
        public let source: String

        /// `shard`, found as `source` says.
        public init(shard: Shard, source: String) {
            self.shard = shard
            self.source = source
        }
    }

    /// The shard a scheduler gives this process through its environment, or nil when none does:
    /// Kubernetes Indexed Jobs (`JOB_COMPLETION_INDEX`, the count from `countOverride` or
    /// `PIPELINE_SHARD_COUNT`, which the Job's manifest sets), Slurm job arrays
    /// (`SLURM_ARRAY_TASK_ID` relative to `SLURM_ARRAY_TASK_MIN`, over `SLURM_ARRAY_TASK_STEP`
    /// when the range has a step, of `SLURM_ARRAY_TASK_COUNT`),
    /// AWS Batch array jobs (`AWS_BATCH_JOB_ARRAY_INDEX`, `AWS_BATCH_JOB_ARRAY_SIZE`) and Cloud Run
    /// jobs (`CLOUD_RUN_TASK_INDEX`, `CLOUD_RUN_TASK_COUNT`).
    public static func fromScheduler(_ environment: [String: String], countOverride: Int? = nil) throws(ShardError) -> Found? {
        func number(_ name: String) throws(ShardError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw ShardError("\(name)=\(text) is not a number") }
            return value
        }
        func count(_ name: String) throws(ShardError) -> (Int, String) {
            let given = try? number(name)
            if let countOverride {
                // The scheduler runs as many tasks as its count: a larger count would leave
                // shards no task makes, each task ending well all the same.
                if let given, given != countOverride {
                    throw ShardError(
                        "--shard-count \(countOverride) and \(name)=\(given) give two shard counts: "
                            + "leave --shard-count out where the scheduler gives the count")
                }
                return (countOverride, "--shard-count \(countOverride)")
            }
            guard let value = try number(name) else { throw ShardError("\(name) is not set: give the shard count with --shard-count") }
            return (value, "\(name)=\(value)")
        }
        // A shard the variables cannot make is refused naming them, so that one unset or wrong is seen.
        func found(_ index: Int, of total: Int, source: String) throws(ShardError) -> Found {
            do {
                return Found(shard: try Shard(index: index, count: total), source: source)
            } catch {
                throw ShardError("\(error.description) (\(source))")
            }
        }
        if let index = try number("JOB_COMPLETION_INDEX") {
            let (total, from) = try count("PIPELINE_SHARD_COUNT")
            return try found(index, of: total, source: "Kubernetes: JOB_COMPLETION_INDEX=\(index) of \(from)")
        }
        if let task = try number("SLURM_ARRAY_TASK_ID") {
            let given = try number("SLURM_ARRAY_TASK_MIN")
            let minimum = given ?? 0
            let (total, from) = try count("SLURM_ARRAY_TASK_COUNT")
            // Both come from outside: a difference beyond Int's range is refused, never a trap.
            let (offset, overflowed) = task.subtractingReportingOverflow(minimum)
            guard !overflowed else {
                throw ShardError("SLURM_ARRAY_TASK_ID=\(task) - SLURM_ARRAY_TASK_MIN=\(minimum) is out of range")
            }
            let lowest = given.map { "SLURM_ARRAY_TASK_MIN=\($0)" } ?? "SLURM_ARRAY_TASK_MIN unset, so 0"
            // A stepped array (`--array=0-6:2`) numbers its tasks a step apart.
            let step = try number("SLURM_ARRAY_TASK_STEP") ?? 1
            guard step > 0, offset % step == 0 else {
                throw ShardError(
                    "SLURM_ARRAY_TASK_ID=\(task) is not \(lowest) plus a multiple of SLURM_ARRAY_TASK_STEP=\(step): "
                        + "number the array's tasks in a range (--array=0-N or 0-N:STEP), or give --shard INDEX/COUNT")
            }
            let stepped = step == 1 ? "" : ", over SLURM_ARRAY_TASK_STEP=\(step)"
            do {
                return try found(offset / step, of: total, source: "Slurm: SLURM_ARRAY_TASK_ID=\(task) - \(lowest)\(stepped) of \(from)")
            } catch {
                // A list (`--array=1,5,9`) has no step to find its tasks' order by.
                throw ShardError(
                    error.description + "; an array listed task by task cannot be sharded by its numbers: use a range "
                        + "(--array=0-N or 0-N:STEP), or give --shard INDEX/COUNT")
            }
        }
        if let index = try number("AWS_BATCH_JOB_ARRAY_INDEX") {
            let (total, from) = try count("AWS_BATCH_JOB_ARRAY_SIZE")
            return try found(index, of: total, source: "AWS Batch: AWS_BATCH_JOB_ARRAY_INDEX=\(index) of \(from)")
        }
        if let index = try number("CLOUD_RUN_TASK_INDEX") {
            let (total, from) = try count("CLOUD_RUN_TASK_COUNT")
            return try found(index, of: total, source: "Cloud Run: CLOUD_RUN_TASK_INDEX=\(index) of \(from)")
        }
        if let countOverride {
            throw ShardError(
                "--shard-count \(countOverride) is the count a scheduler's index falls in, and no scheduler's variable gives one "
                    + "(JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX): give --shard INDEX/COUNT"
            )
        }
        // Set for an Indexed Job whose pods get no index (a Job without `completionMode:
        // Indexed`): each would make every input, all at once.
        if let count = environment["PIPELINE_SHARD_COUNT"] {
            throw ShardError(
                "PIPELINE_SHARD_COUNT=\(count) is set, and JOB_COMPLETION_INDEX is not: every task would make every input; "
                    + "give the Job completionMode: Indexed, or give --shard INDEX/COUNT")
        }
        return nil
    }
}
