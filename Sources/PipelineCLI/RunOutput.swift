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
    /// A failure's line as the command says it.
    private let describingFailures: (String) -> String
    /// The shard the run makes, when it is one, for `--json`'s `runStarted`.
    private let shard: Shard?
    /// Where the outputs written or up to date are, for the summary.
    private(set) var locations: OutputLocations
    /// The qualities quality targets chose, for the summary.
    private(set) var chosenQualities = ChosenQualities()

    /// `baseDirectory`: the pipeline file's folder, which the outputs' paths are relative to;
    /// `shard`: the run's, when it is one; `describingFailures` words the failures, and the
    /// warnings of the files written, printed for people.
    init(
        mode: Mode, verbose: Bool, logger: Logger, run: PipelineRun, baseDirectory: URL, shard: Shard? = nil,
        describingFailures: @escaping (String) -> String = { $0 }
    ) {
        self.mode = mode
        self.shard = shard
        self.describingFailures = describingFailures
        locations = OutputLocations(baseDirectory: baseDirectory)
        self.verbose = verbose
        self.logger = logger
        progress = mode == .progress ? ProgressDisplay(run: run) : nil
    }

    /// Hands `event` to each sink in turn: what the summary needs, the log, people, scripts.
    func handle(_ event: PipelineEvent) {
        record(event)
        log(event)
        printForPeople(event)
        if mode == .json { printJSON(event) }
    }

    /// Keeps where outputs went and the qualities chosen, for the summary.
    private func record(_ event: PipelineEvent) {
        guard case .itemCompleted(let report) = event else { return }
        for output in report.written {
            locations.add(output.path)
            if let searched = output.searchedQuality {
                chosenQualities.add(format: output.format?.rawValue ?? "?", quality: searched.quality)
            }
        }
    }

    /// Diagnostics only: warnings and failures reach people through `printForPeople`.
    private func log(_ event: PipelineEvent) {
        switch event {
        case .started(let inputs, let outputs, _):
            logger.info("run started", metadata: ["inputs": "\(inputs)", "outputsPerInput": "\(outputs)"])
        case .itemStarted(let input):
            logger.debug("item started", metadata: ["input": "\(input.displayName)"])
        case .stageFinished(let operation):
            logger.trace(
                "stage finished",
                metadata: [
                    "stage": "\(operation.stage.rawValue)", "input": "\(operation.input)",
                    "seconds": "\(operation.duration)", "waited": "\(operation.waited)",
                ])
        case .itemCompleted:
            break
        case .finished(let summary):
            logger.info("run finished", metadata: ["succeeded": "\(summary.succeeded)", "failed": "\(summary.failed)"])
        }
    }

    /// Progress, and failures and warnings once, plainly, on standard error in every mode; with
    /// `-v` (not `--json`) each file on standard output.
    private func printForPeople(_ event: PipelineEvent) {
        switch event {
        case .started(let inputs, _, let warnings):
            printWarnings(warnings)
            progress?.start(total: inputs)
        case .itemStarted, .stageFinished:
            break
        case .itemCompleted(let report):
            // Failures always reach standard error, whatever the mode and log level.
            for failure in report.failures { printAboveProgress("failed: " + describingFailures("\(failure)")) }
            for warning in report.written.flatMap(\.warnings) { printAboveProgress("warning: " + describingFailures(warning)) }
            if verbose, mode != .json { printWritten(report.written) }
            progress?.completed(succeeded: report.succeeded)
        case .finished(let summary):
            progress?.stop()
            if summary.inputsServedStale > 0 {
                let count = summary.inputsServedStale
                printError(
                    "warning: \(count) remote input\(count == 1 ? "" : "s") could not be fetched (server unreachable or failing) "
                        + "and \(count == 1 ? "was" : "were") made from the cached copy (fetch.staleIfError)")
            }
            printWarnings(summary.warnings)
        }
    }

    private func printWarnings(_ warnings: [String]) {
        for warning in warnings { printError("warning: \(warning)".escapingControlCharacters) }
    }

    private func printAboveProgress(_ line: String) {
        progress?.clear()
        printError(line.escapingControlCharacters)
    }

    private func printWritten(_ written: [WrittenOutput]) {
        progress?.clear()
        for output in written {
            let searched = output.searchedQuality.map { String(format: ", quality %d for SSIMULACRA 2 %.1f", $0.quality, $0.score) }
            printOutput(
                "\(output.upToDate ? "up to date" : "wrote") \(output.path) (\(output.size), \(output.byteCount) bytes\(searched ?? ""))"
                    .escapingControlCharacters)
        }
    }

    /// One JSON object per line on standard output (`RunEventLines`), failures and warnings
    /// included.
    private func printJSON(_ event: PipelineEvent) {
        let lines = RunEventLines.lines(for: event, shard: shard, outputFolder: locations.folder, firstOutput: locations.first)
        for line in lines {
            guard let data = try? RunEventLines.encoded(line) else { continue }
            StandardOutput.write(data + Data("\n".utf8))
        }
    }
}
