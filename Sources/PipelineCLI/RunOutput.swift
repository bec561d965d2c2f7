import Foundation
import Logging
import PipelineKit

/// Everything `pipeline run` prints while a run goes: live progress or JSON events, failures,
/// log lines. Fed each event in order by the run loop.
final class RunOutput {
    enum Mode {
        /// Progress redrawn in place on a terminal, a plain line now and then otherwise.
        case progress
        /// One JSON object per event on standard output, for scripts.
        case json
        /// Failures only.
        case quiet
    }

    private let mode: Mode
    private let verbose: Bool
    private let logger: Logger
    private let progress: ProgressDisplay?
    /// Where the outputs written or up to date are, for the summary.
    private(set) var locations: OutputLocations
    /// The qualities quality targets chose, for the summary.
    private(set) var chosenQualities = ChosenQualities()

    /// `baseDirectory`: the pipeline file's folder, which the outputs' paths are relative to.
    init(mode: Mode, verbose: Bool, logger: Logger, run: PipelineRun, baseDirectory: URL) {
        self.mode = mode
        locations = OutputLocations(baseDirectory: baseDirectory)
        self.verbose = verbose
        self.logger = logger
        progress = mode == .progress ? ProgressDisplay(run: run) : nil
    }

    func handle(_ event: PipelineEvent) {
        switch event {
        case .started(let inputs, let outputs, let warnings):
            // Warnings and failures are printed once, plainly; the logger carries diagnostics only.
            for warning in warnings { printError("warning: \(warning)".escapingControlCharacters) }
            logger.info("run started", metadata: ["inputs": "\(inputs)", "outputsPerInput": "\(outputs)"])
            progress?.start(total: inputs)
            json(["event": "runStarted", "inputs": inputs, "outputsPerInput": outputs, "warnings": warnings])
        case .itemStarted(let input):
            logger.debug("item started", metadata: ["input": "\(input.displayName.escapingControlCharacters)"])
            json(["event": "itemStarted", "input": input.displayName])
        case .stageFinished(let operation):
            logger.trace(
                "stage finished",
                metadata: [
                    "stage": "\(operation.stage.rawValue)", "input": "\(operation.input.escapingControlCharacters)",
                    "seconds": "\(operation.duration)", "waited": "\(operation.waited)",
                ])
            var fields: [String: Any] = [
                "event": "stageFinished", "stage": operation.stage.rawValue, "input": operation.input,
                "start": operation.startedAt, "seconds": operation.duration, "waited": operation.waited,
                "lane": operation.lane, "succeeded": operation.succeeded,
            ]
            if let output = operation.output { fields["output"] = output }
            json(fields)
        case .itemCompleted(let report):
            for output in report.written {
                locations.add(output.path)
                if let searched = output.searchedQuality {
                    chosenQualities.add(format: output.format?.rawValue ?? "?", quality: searched.quality)
                }
            }
            for failure in report.failures {
                // Failures always reach standard error, whatever the mode and log level.
                progress?.clear()
                printError("failed: \(failure)".escapingControlCharacters)
                var fields: [String: Any] = [
                    "event": "itemFailed", "input": failure.input, "stage": failure.stage.rawValue,
                    "kind": failure.error.kind.description, "reason": failure.reason,
                ]
                if let output = failure.output { fields["output"] = output }
                if let step = failure.step { fields["step"] = ["index": step.index, "name": step.name] }
                json(fields)
            }
            for warning in report.written.flatMap(\.warnings) {
                progress?.clear()
                printError("warning: \(warning)".escapingControlCharacters)
                json(["event": "warning", "input": report.input.displayName, "message": warning])
            }
            if verbose, mode != .json {
                progress?.clear()
                for output in report.written {
                    let searched = output.searchedQuality.map { String(format: ", quality %d for SSIMULACRA 2 %.1f", $0.quality, $0.score) }
                    print(
                        "\(output.upToDate ? "up to date" : "wrote") \(output.path) (\(output.size), \(output.byteCount) bytes\(searched ?? ""))"
                            .escapingControlCharacters)
                }
            }
            progress?.completed(succeeded: report.succeeded)
            json([
                "event": "itemCompleted", "input": report.input.displayName, "status": report.succeeded ? "succeeded" : "failed",
                "outputs": report.written.map { written -> [String: Any] in
                    var fields: [String: Any] = [
                        "name": written.output, "path": written.path, "width": written.size.width,
                        "height": written.size.height, "bytes": written.byteCount, "upToDate": written.upToDate,
                    ]
                    if let searched = written.searchedQuality {
                        fields["quality"] = searched.quality; fields["ssimulacra2"] = searched.score
                    }
                    return fields
                },
            ])
        case .finished(let summary):
            progress?.stop()
            if summary.inputsServedStale > 0 {
                let count = summary.inputsServedStale
                printError(
                    "warning: \(count) remote input\(count == 1 ? "" : "s") could not be fetched (server unreachable or failing) "
                        + "and \(count == 1 ? "was" : "were") made from the cached copy (fetch.staleIfError)")
            }
            for warning in summary.warnings { printError("warning: \(warning)".escapingControlCharacters) }
            logger.info("run finished", metadata: ["succeeded": "\(summary.succeeded)", "failed": "\(summary.failed)"])
            var fields: [String: Any] = [
                "event": "runFinished", "inputs": summary.inputs, "succeeded": summary.succeeded, "failed": summary.failed,
                "notRun": summary.notRun, "outputsWritten": summary.outputsWritten, "outputsUpToDate": summary.outputsUpToDate,
                "seconds": summary.seconds,
                "imagesPerSecond": summary.imagesPerSecond, "cancelled": summary.cancelled,
                "inputsServedStale": summary.inputsServedStale,
            ]
            if !summary.warnings.isEmpty { fields["warnings"] = summary.warnings }
            // Where the outputs went: the folder that holds them all, else the first one.
            if let folder = locations.folder { fields["outputFolder"] = folder }
            if let first = locations.first { fields["firstOutput"] = first }
            if let memory = summary.memory {
                fields["memory"] = [
                    "budgetBytes": memory.budget.bytes, "limitBytes": memory.budget.limit, "source": memory.budget.source,
                    "peakAdmittedBytes": memory.peakAdmittedBytes,
                ]
            }
            json(fields)
        }
    }

    private func json(_ fields: [String: Any]) {
        guard mode == .json,
            let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        // A reader gone away is not an error here: the run stops on it (`Interruption`).
        try? FileHandle.standardOutput.write(contentsOf: data + Data("\n".utf8))
    }
}
