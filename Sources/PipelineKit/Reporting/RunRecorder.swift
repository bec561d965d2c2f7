import Foundation

/// Collects a run's events into a `RunReport` and a list of stage operations (for traces).
/// Feed it every event of a run, in order, from one task.
public struct RunRecorder: Sendable {
    /// Every stage operation recorded, in the order they finished (for traces).
    public private(set) var operations: [StageOperation] = []
    private var reports: [ItemReport] = []
    private var summary: RunSummary?
    private let definition: PipelineDefinition
    private let startedAt = Date()

    /// The shard the run made, for `pipeline merge-reports`.
    private let shard: Shard?

    /// A recorder for a run of `definition`, of `shard` when it made one.
    public init(definition: PipelineDefinition, shard: Shard? = nil) {
        self.definition = definition
        self.shard = shard
    }

    /// Takes the next event of the run.
    public mutating func record(_ event: PipelineEvent) {
        switch event {
        case .started, .itemStarted: break
        case .stageFinished(let operation): operations.append(operation)
        case .itemCompleted(let report): reports.append(report)
        case .finished(let final): summary = final
        }
    }

    /// The report so far (complete once the `finished` event was recorded).
    public var report: RunReport {
        let secondsByInput = Dictionary(grouping: operations, by: \.input).mapValues { operations in
            Dictionary(grouping: operations, by: \.stage.rawValue).mapValues { $0.reduce(0) { $0 + $1.duration } }
        }
        let formats = Dictionary(definition.outputs.map { ($0.name, $0.encoder.format.rawValue) }, uniquingKeysWith: { first, _ in first })
        let items = reports.map { report -> RunReport.Item in
            let whole = report.failures.first { $0.output == nil }
            // An output with widths and formats is several definitions of one name: each file
            // it wrote is listed, and each failure; widths not made for a narrow image are neither.
            var seen: Set<String> = []
            let outputs = definition.outputs.filter { seen.insert($0.name).inserted }.flatMap { output -> [RunReport.Output] in
                let written = report.written.filter { $0.output == output.name }
                let failures = report.failures.filter { $0.output == output.name }
                let succeeded = written.map { written in
                    RunReport.Output(
                        name: output.name, path: written.path, status: .succeeded, error: nil, stage: nil, step: nil,
                        width: written.size.width, height: written.size.height, bytes: written.byteCount,
                        format: written.format?.rawValue ?? formats[output.name] ?? "", upToDate: written.upToDate,
                        quality: written.searchedQuality?.quality, ssimulacra2: written.searchedQuality?.score)
                }
                let failed = (failures.isEmpty && written.isEmpty ? [whole] : failures.map { Optional($0) }).map { failure in
                    RunReport.Output(
                        name: output.name, path: nil, status: .failed, error: failure?.reason,
                        kind: failure.map { $0.error.kind.description }, stage: failure?.stage, step: failure?.step,
                        width: nil, height: nil, bytes: nil, format: formats[output.name] ?? "", upToDate: nil)
                }
                return output.variant == nil ? Array((succeeded + failed).prefix(1)) : succeeded + failed
            }
            return RunReport.Item(
                input: report.input.displayName, status: report.succeeded ? .succeeded : .failed,
                error: whole?.reason, kind: whole.map { $0.error.kind.description }, stage: whole?.stage,
                width: report.originalSize?.width, height: report.originalSize?.height,
                bytes: report.input.byteCount, stageSeconds: secondsByInput[report.input.displayName] ?? [:], outputs: outputs)
        }
        let widths: [Stage: Int] = [
            .fetch: definition.fetch.concurrency, .cache: definition.cache.concurrency,
            .decompress: definition.decompress.concurrency, .process: definition.process.concurrency,
            .encode: definition.encode.concurrency,
        ]
        let stages = Stage.allCases.map { stage -> RunReport.StageTotals in
            let ofStage = operations.filter { $0.stage == stage }
            return RunReport.StageTotals(
                stage: stage, concurrency: widths[stage] ?? 1, operations: ofStage.count,
                busySeconds: ofStage.reduce(0) { $0 + $1.duration },
                waitSeconds: ofStage.reduce(0) { $0 + $1.waited })
        }
        let elapsed = summary?.seconds ?? 0
        return RunReport(
            pipeline: definition.name, version: PipelineKitInfo.version, startedAt: startedAt, elapsedSeconds: elapsed,
            inputs: summary?.inputs ?? items.count, succeeded: summary?.succeeded ?? 0, failed: summary?.failed ?? 0,
            notRun: summary?.notRun ?? 0, outputsWritten: summary?.outputsWritten ?? 0,
            outputsUpToDate: summary?.outputsUpToDate ?? 0, cancelled: summary?.cancelled ?? false,
            stages: stages, items: items,
            shard: shard.map { RunReport.ShardInfo(index: $0.index, count: $0.count) },
            memory: summary?.memory.map {
                RunReport.MemoryInfo(
                    budgetBytes: $0.budget.bytes, limitBytes: $0.budget.limit, source: $0.budget.source,
                    peakAdmittedBytes: $0.peakAdmittedBytes)
            })
    }

    /// `report.json`: the report as pretty-printed JSON.
    public func reportJSON() throws -> Data {
        try ReportWriter.encodedJSON(report)
    }

    /// The stage operations in the Chrome Trace Event format (Perfetto, chrome://tracing): one
    /// track per lane of each stage queue with a slice per operation, and one track per stage
    /// of queue waits (async slices, as waits overlap).
    public func traceJSON() throws -> Data {
        var events: [[String: any Sendable]] = []
        let stageIndex = Dictionary(uniqueKeysWithValues: Stage.allCases.enumerated().map { ($1, $0) })
        var namedTracks = Set<Int>()
        func microseconds(_ seconds: Double) -> Int { Int((seconds * 1_000_000).rounded()) }
        for (number, operation) in operations.enumerated() {
            let stage = stageIndex[operation.stage] ?? 0
            let track = (stage + 1) * 100 + operation.lane
            if namedTracks.insert(track).inserted {
                events.append([
                    "name": "thread_name", "ph": "M", "pid": 1, "tid": track,
                    "args": ["name": "\(operation.stage.rawValue) #\(operation.lane + 1)"],
                ])
                events.append(["name": "thread_sort_index", "ph": "M", "pid": 1, "tid": track, "args": ["sort_index": track]])
            }
            let label = operation.output.map { "\(operation.input) → \($0)" } ?? operation.input
            var args: [String: any Sendable] = ["input": operation.input, "succeeded": operation.succeeded]
            if let output = operation.output { args["output"] = output }
            events.append([
                "name": label, "cat": operation.stage.rawValue, "ph": "X", "pid": 1, "tid": track,
                "ts": microseconds(operation.startedAt), "dur": max(1, microseconds(operation.duration)), "args": args,
            ])
            if operation.waited > 0.0005 {
                let waitTrack = (stage + 1) * 100 + 99
                if namedTracks.insert(waitTrack).inserted {
                    events.append([
                        "name": "thread_name", "ph": "M", "pid": 1, "tid": waitTrack,
                        "args": ["name": "\(operation.stage.rawValue) queue (waiting)"],
                    ])
                    events.append(["name": "thread_sort_index", "ph": "M", "pid": 1, "tid": waitTrack, "args": ["sort_index": waitTrack]])
                }
                let common: [String: any Sendable] = ["name": "waiting: \(label)", "cat": "wait", "pid": 1, "tid": waitTrack, "id": number]
                events.append(common.merging(["ph": "b", "ts": microseconds(operation.queuedAt)]) { $1 })
                events.append(common.merging(["ph": "e", "ts": microseconds(operation.startedAt)]) { $1 })
            }
        }
        let trace: [String: any Sendable] = ["traceEvents": events, "displayTimeUnit": "ms"]
        return try JSONSerialization.data(withJSONObject: trace, options: [.sortedKeys])
    }

    /// Writes `traceJSON()` to `path` as the report's files are written (a temporary file
    /// beside it, flushed, renamed); the error names the file and the system's reason.
    public func writeTrace(to path: String) throws(ReportWriterError) {
        let data: Data
        do {
            data = try traceJSON()
        } catch {
            throw ReportWriterError(path: path, reason: "the trace cannot be encoded as JSON")
        }
        // Absolute, so that the temporary file goes beside it whatever the path is relative to.
        try ReportWriter.writeAtomically(data, to: URL(fileURLWithPath: path).standardizedFileURL.path)
    }
}
