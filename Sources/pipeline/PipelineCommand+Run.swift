import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a pipeline file: make every output from every input.",
            discussion: "Failures are printed as they happen; a summary follows. Ctrl-C stops queued work, lets running work finish and exits 130."
        )

        @Argument(help: "The pipeline file (JSON).")
        var file: String

        @Flag(name: .shortAndLong, help: "Print only failures, no summary.")
        var quiet = false

        @Flag(name: .shortAndLong, help: "Print a line for every output written.")
        var verbose = false

        func run() async throws {
            let pipeline = try loadPipeline(file)
            let run: PipelineRun
            do {
                run = try pipeline.run()
            } catch {
                printError(error.description)
                throw ExitCode.invalidInput
            }

            let interrupted = OnceFlag()
            let interruption = Interruption {
                interrupted.set()
                printError("interrupted: finishing the work in progress…")
                run.cancel()
            }
            defer { interruption.stop() }

            var summary: RunSummary?
            for await event in run {
                switch event {
                case .started(_, _, let warnings):
                    for warning in warnings { printError("warning: \(warning)") }
                case .itemCompleted(let report):
                    for failure in report.failures { printError("failed: \(failure)") }
                    if verbose {
                        for output in report.written { print("wrote \(output.path) (\(output.size), \(output.byteCount) bytes)") }
                    }
                case .finished(let final):
                    summary = final
                case .itemStarted, .stageFinished:
                    break
                }
            }
            guard let summary else { throw ExitCode.failure }
            if !quiet { print(Self.describe(summary)) }
            if interrupted.isSet { throw ExitCode.interrupted }
            if summary.failed > 0 { throw ExitCode.someItemsFailed }
        }

        static func describe(_ summary: RunSummary) -> String {
            let seconds = Double(summary.elapsed.components.seconds) + Double(summary.elapsed.components.attoseconds) * 1e-18
            var parts = ["\(summary.inputs) input\(summary.inputs == 1 ? "" : "s")",
                         "\(summary.succeeded) succeeded", "\(summary.failed) failed"]
            if summary.notRun > 0 { parts.append("\(summary.notRun) not run") }
            return parts.joined(separator: ", ")
                + "; \(summary.outputsWritten) output\(summary.outputsWritten == 1 ? "" : "s") written"
                + " in " + String(format: "%.2f s (%.1f images/s)", seconds, summary.imagesPerSecond)
        }
    }
}

/// Turns the first Ctrl-C into a callback instead of killing the process, so that the run can
/// wind down and leave no temporary files; a second Ctrl-C exits at once.
final class Interruption {
    private let source: any DispatchSourceSignal

    init(_ handler: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        let seen = OnceFlag()
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            if seen.isSet { Foundation.exit(ExitCode.interrupted.rawValue) }
            seen.set()
            handler()
        }
        source.resume()
    }

    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}

/// A flag one thread sets and another reads.
final class OnceFlag: Sendable {
    private let value = Locked(false)

    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
