import Foundation
import Vips

/// Collects a run's events into a `RunReport` and a trace of its stage operations. Feed it
/// every event of a run, in order, from one task; then write the report
/// (`ReportWriter.write(_:to:inputDirectory:)` with the recorder) and the trace
/// (`writeTrace(to:)`), or take the `report` whole.
///
/// What grows with the inputs, each input's part of the report and each operation's part of
/// the trace, goes to disk as it comes (unlinked temporary files in `TMPDIR`), so a run of many
/// inputs holds a few bytes for each: the page's cards and failures (`HTMLReport.Selection`),
/// the stage totals, and the seconds of the inputs in flight.
package final class RunRecorder: Sendable {
    private let definition: PipelineDefinition
    private let startedAt = Date()
    /// The shard the run made, for `pipeline merge-reports`.
    private let shard: Shard?
    /// Each output's format by name, for outputs that failed before they had a file.
    private let formats: [String: String]
    private let state: Locked<State>

    private struct State {
        var summary: RunSummary?
        /// The plan's warnings, from the `started` event.
        var planWarnings: [String] = []
        /// Seconds worked in each stage by the inputs not completed yet.
        var secondsInFlight: [String: [String: Double]] = [:]
        /// The input completed last and its seconds: each listing of a source that names it
        /// the same way reports them.
        var lastCompleted: (input: String, seconds: [String: Double])?
        var stages: [Stage: RunReport.StageTotals] = [:]
        /// Each item as `report.json` prints it, in the order they finished, one after another.
        let items: SpillFile
        var itemCount = 0
        var page = HTMLReport.Selection()
        /// The trace's events, as `writeTrace(to:)` prints them; nil when no trace is kept.
        let trace: SpillFile?
        var operationCount = 0
        var namedTracks = Set<Int>()
        /// Why the report's items could not be kept, said when the report is written.
        var problem: ReportWriterError?
        /// Why the trace's events could not be kept, said when the trace is written: apart from
        /// the report's, which it must not fail.
        var traceProblem: ReportWriterError?
    }

    /// A recorder for a run of `definition`, of `shard` when it made one; `keepsTrace: false`
    /// when no trace will be written.
    ///
    /// - Throws: when its temporary files cannot be made (`TMPDIR`, else /tmp, not writable):
    ///   before the run, not when its report is written.
    package init(definition: PipelineDefinition, shard: Shard? = nil, keepsTrace: Bool = true) throws(ReportWriterError) {
        self.definition = definition
        self.shard = shard
        formats = Dictionary(definition.outputs.map { ($0.name, $0.encoder.format.rawValue) }, uniquingKeysWith: { first, _ in first })
        var state = State(
            items: try SpillFile(for: "the report's items"), trace: keepsTrace ? try SpillFile(for: "the trace's events") : nil)
        let lanes: [Stage: Int] = [
            .fetch: definition.fetch.concurrency, .cache: definition.cache.concurrency,
            .decompress: definition.decompress.concurrency, .process: definition.process.concurrency,
            .encode: definition.encode.concurrency,
        ]
        for stage in Stage.allCases {
            state.stages[stage] = RunReport.StageTotals(
                stage: stage, concurrency: lanes[stage] ?? 1, operations: 0, busySeconds: 0, waitSeconds: 0)
        }
        self.state = Locked(state)
    }

    /// Takes the next event of the run.
    package func record(_ event: PipelineEvent) {
        switch event {
        case .started(_, _, let warnings): state.withLock { $0.planWarnings = warnings }
        case .itemStarted: break
        case .stageFinished(let operation): state.withLock { record(operation, in: &$0) }
        case .itemCompleted(let report): state.withLock { record(report, in: &$0) }
        case .finished(let final):
            state.withLock { state in
                state.summary = final
                for notRun in final.inputsNotRun {
                    append(item(forNotRun: notRun, seconds: state.secondsInFlight[notRun.input] ?? [:]), to: &state)
                }
            }
        }
    }

    private func record(_ operation: StageOperation, in state: inout State) {
        state.secondsInFlight[operation.input, default: [:]][operation.stage.rawValue, default: 0] += operation.duration
        state.stages[operation.stage]?.operations += 1
        state.stages[operation.stage]?.busySeconds += operation.duration
        state.stages[operation.stage]?.waitSeconds += operation.waited
        defer { state.operationCount += 1 }
        guard let trace = state.trace, state.traceProblem == nil else { return }
        do {
            for event in Self.traceEvents(of: operation, number: state.operationCount, namedTracks: &state.namedTracks) {
                try trace.append(item: try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys]), separator: ",")
            }
        } catch let error as ReportWriterError {
            state.traceProblem = error
        } catch {
            state.traceProblem = ReportWriterError(path: "the trace's events", reason: "cannot be encoded as JSON")
        }
    }

    private func record(_ report: ItemReport, in state: inout State) {
        let name = report.input.displayName
        let seconds =
            state.secondsInFlight.removeValue(forKey: name) ?? (state.lastCompleted?.input == name ? state.lastCompleted?.seconds : nil)
            ?? [:]
        state.lastCompleted = (name, seconds)
        let item = item(for: report, seconds: seconds)
        state.page.add(item)
        append(item, to: &state)
    }

    /// Keeps `item` for `report.json`.
    private func append(_ item: RunReport.Item, to state: inout State) {
        guard state.problem == nil else { return }
        do {
            try state.items.append(item: try ReportWriter.makeEncoder().encodedTwoLevelsDeep(item), separator: ",\n")
            state.itemCount += 1
        } catch let error as ReportWriterError {
            state.problem = error
        } catch {
            state.problem = ReportWriterError(path: "the report's items", reason: "cannot be encoded as JSON: \(error)")
        }
    }

    /// The report's entry for one listing, with the seconds its source worked in each stage.
    private func item(for report: ItemReport, seconds: [String: Double]) -> RunReport.Item {
        let whole = report.failures.first { $0.output == nil }
        // An output with widths and formats is several definitions of one name: each file
        // it wrote is listed, and each failure; widths not made for a narrow image are neither,
        // nor an output whose `inputs` leave this input out.
        var seen: Set<String> = []
        // The widths and formats of one name share its `inputs`: asked once a name.
        let named = definition.outputs.filter { seen.insert($0.name).inserted }
        let applying = named.filter { output in
            output.inputSubset?.contains(
                report.input, baseDirectory: definition.baseDirectory, caseInsensitive: definition.caseInsensitive) ?? true
        }
        let outputs = applying.flatMap { output -> [RunReport.Output] in
            let written = report.written.filter { $0.output == output.name }
            let failures = report.failures.filter { $0.output == output.name }
            let succeeded = written.map(made)
            let failed = (failures.isEmpty && written.isEmpty ? [whole] : failures.map { Optional($0) }).map { failure in
                RunReport.Output(
                    name: output.name, path: nil, status: .failed, error: failure?.reason,
                    kind: failure.map { $0.error.kind.description }, stage: failure?.stage, step: failure?.step,
                    width: nil, height: nil, bytes: nil, format: failure?.format?.rawValue ?? formats[output.name] ?? "", upToDate: nil,
                    file: failure?.file)
            }
            return output.variant == nil ? Array((succeeded + failed).prefix(1)) : succeeded + failed
        }
        return RunReport.Item(
            input: report.input.displayName, status: report.succeeded ? .succeeded : .failed,
            error: whole?.reason, kind: whole.map { $0.error.kind.description }, stage: whole?.stage,
            width: report.originalSize?.width, height: report.originalSize?.height,
            bytes: report.input.byteCount, stageSeconds: seconds, outputs: outputs)
    }

    /// The report's entry for an input the run did not finish: not on the page, whose banner
    /// counts them, but in `report.json`, so that what is left can be found, with the files it
    /// had when it was cut short.
    private func item(forNotRun notRun: RunSummary.NotRunInput, seconds: [String: Double]) -> RunReport.Item {
        RunReport.Item(
            input: notRun.input, status: .notRun, error: nil, stage: nil, width: nil, height: nil, bytes: nil, stageSeconds: seconds,
            outputs: notRun.written.map(made))
    }

    /// The report's entry for a file written or found up to date.
    private func made(_ written: WrittenOutput) -> RunReport.Output {
        RunReport.Output(
            name: written.output, path: written.path, status: .succeeded, error: nil, stage: nil, step: nil,
            width: written.size.width, height: written.size.height, bytes: written.byteCount,
            format: written.format?.rawValue ?? formats[written.output] ?? "", upToDate: written.upToDate,
            quality: written.searchedQuality?.quality, ssimulacra2: written.searchedQuality?.score,
            ssimulacra2Target: written.searchedQuality?.target, warnings: written.warnings.isEmpty ? nil : written.warnings)
    }

    /// `body` with the state, holding the lock.
    private func withState<Result>(_ body: (inout State) throws(ReportWriterError) -> Result) throws(ReportWriterError) -> Result {
        try state.withLock { state in Swift.Result { () throws(ReportWriterError) in try body(&state) } }.get()
    }

    /// The report's totals, with no items.
    private func totals(_ state: State) -> RunReport {
        let summary = state.summary
        let warnings = state.planWarnings + (summary?.warnings ?? [])
        return RunReport(
            pipeline: definition.name, version: PipelineKitInfo.version, startedAt: startedAt, elapsedSeconds: summary?.seconds ?? 0,
            inputs: summary?.inputs ?? state.itemCount, succeeded: summary?.succeeded ?? 0, failed: summary?.failed ?? 0,
            notRun: summary?.notRun ?? 0, outputsWritten: summary?.outputsWritten ?? 0,
            outputsUpToDate: summary?.outputsUpToDate ?? 0, cancelled: summary?.cancelled ?? false,
            stages: Stage.allCases.compactMap { state.stages[$0] }, items: [],
            shard: shard.map { RunReport.ShardInfo($0, batch: summary?.batch) },
            memory: summary?.memory.map {
                RunReport.MemoryInfo(
                    budgetBytes: $0.budget.bytes, limitBytes: $0.budget.limit, source: $0.budget.source,
                    peakAdmittedBytes: $0.peakAdmittedBytes)
            },
            warnings: warnings.isEmpty ? nil : warnings)
    }

    /// The report so far (complete once the `finished` event was recorded), every item read
    /// back into memory; `ReportWriter.write(_:to:inputDirectory:)` with the recorder writes it
    /// without.
    package var report: RunReport {
        get throws(ReportWriterError) {
            var report = try withState { state throws(ReportWriterError) in
                if let problem = state.problem { throw problem }
                return totals(state)
            }
            let json = try reportJSON()
            do {
                report.items = try ReportWriter.makeDecoder().decode(RunReport.self, from: json).items
            } catch {
                throw ReportWriterError(path: "the report's items", reason: "cannot be read back: \(error)")
            }
            return report
        }
    }

    /// `report.json`: the report as pretty-printed JSON, the bytes `ReportWriter.encodedJSON(_:)`
    /// gives for `report`.
    package func reportJSON() throws(ReportWriterError) -> Data {
        var data = Data()
        _ = try writeReportJSON {
            data.append($0); return true
        }
        return data
    }

    /// Hands `report.json` to `write` a piece at a time; false when `write` refused one.
    func writeReportJSON(to write: (Data) -> Bool) throws(ReportWriterError) -> Bool {
        try withState { state throws(ReportWriterError) in
            if let problem = state.problem { throw problem }
            let around: (head: Data, tail: Data)
            do {
                around = try ReportWriter.makeEncoder().encodedAround(list: "items", of: totals(state))
            } catch {
                throw ReportWriterError(path: ReportWriter.jsonFileName, reason: "cannot encode the report: \(error)")
            }
            guard write(around.head) else { return false }
            guard try state.items.copyAll(to: write) else { return false }
            return write(around.tail)
        }
    }

    /// The page `ReportWriter` writes beside `report.json`.
    func htmlReport(inputDirectory: URL?) throws(ReportWriterError) -> HTMLReport {
        try withState { state throws(ReportWriterError) in
            if let problem = state.problem { throw problem }
            return HTMLReport(report: totals(state), page: state.page.page, inputDirectory: inputDirectory)
        }
    }

    /// The stage operations in the Chrome Trace Event format (Perfetto, chrome://tracing): one
    /// track per lane of each stage queue with a slice per operation, and one track per stage
    /// of queue waits (async slices, as waits overlap).
    package func traceJSON() throws(ReportWriterError) -> Data {
        var data = Data()
        _ = try writeTraceJSON {
            data.append($0); return true
        }
        return data
    }

    private func writeTraceJSON(to write: (Data) -> Bool) throws(ReportWriterError) -> Bool {
        try withState { state throws(ReportWriterError) in
            if let problem = state.traceProblem { throw problem }
            guard let trace = state.trace else {
                throw ReportWriterError(path: "the trace", reason: "this recorder was made to keep none (keepsTrace: false)")
            }
            guard write(Data(#"{"displayTimeUnit":"ms","traceEvents":["#.utf8)), try trace.copyAll(to: write) else { return false }
            return write(Data("]}".utf8))
        }
    }

    /// The trace events of `operation`, the `number`th: its slice, after its lane's track's
    /// name the first time the track is used, and its wait in the queue when it waited.
    private static func traceEvents(of operation: StageOperation, number: Int, namedTracks: inout Set<Int>) -> [[String: any Sendable]] {
        var events: [[String: any Sendable]] = []
        let stage = Stage.allCases.firstIndex(of: operation.stage) ?? 0
        func microseconds(_ seconds: Double) -> Int { Int((seconds * 1_000_000).rounded()) }
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
        if let notes = operation.notes { args["notes"] = notes }
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
        return events
    }

    /// Writes the trace to `path` as the report's files are written (a temporary file beside
    /// it, flushed, renamed); the error names the file and the system's reason.
    package func writeTrace(to path: String) throws(ReportWriterError) {
        // Absolute, so that the temporary file goes beside it whatever the path is relative to.
        let file = URL(fileURLWithPath: path).standardizedFileURL
        // Its folder is made when missing, as the report's is.
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw ReportWriterError(
                path: file.deletingLastPathComponent().path, reason: "cannot create the folder: \(ErrorText.reason(error))")
        }
        try ReportWriter.writeAtomically(to: file.path) { write throws(ReportWriterError) in
            try writeTraceJSON(to: write)
        }
    }
}
