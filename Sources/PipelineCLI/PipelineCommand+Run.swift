import ArgumentParser
import Foundation
import Logging
import PipelineKit
import Vips

extension PipelineCommand {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a pipeline file: make every output from every input.",
            discussion: """
                Progress goes to standard error (redrawn in place on a terminal), failures too, as they \
                happen; a summary follows on standard output. Ctrl-C (or SIGTERM) stops queued work, lets \
                running work finish, leaves no temporary file and exits 130 (143); a second Ctrl-C exits at \
                once, a second SIGTERM changes nothing. \
                SIGHUP, SIGUSR1, SIGUSR2, SIGALRM and the other signals that would end it (but SIGQUIT) are \
                handled as SIGTERM. When standard output is a pipe whose reader goes away (`run -v | head -1`), \
                the run stops the same way, quietly, and exits 141.
                """
        )

        @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
        var file: String

        @Flag(name: .shortAndLong, help: "Print only failures: no progress, no summary.")
        var quiet = false

        @Flag(name: .shortAndLong, help: "Print a line for every output written.")
        var verbose = false

        @Flag(
            help:
                "Print one JSON object per event on standard output (runStarted, itemStarted, stageFinished, itemFailed, itemCompleted, warning, runFinished), for scripts."
        )
        var json = false

        @ArgumentParser.Option(
            help: ArgumentHelp("Write report.json and index.html (results, failures, time per stage) into this folder.", valueName: "dir"))
        var report: String?

        @ArgumentParser.Option(
            help: ArgumentHelp(
                "Write a trace of every stage operation in the Chrome Trace Event format (Perfetto, chrome://tracing); its folder is made when missing.",
                valueName: "file"))
        var trace: String?

        @Flag(help: "Make every output again, even those an earlier run made from the same input and settings.")
        var force = false

        @ArgumentParser.Option(help: "How much to log on standard error: trace, debug, info, notice, warning, error or critical.")
        var logLevel: Logger.Level = .warning

        @OptionGroup var sharding: ShardOptions
        @OptionGroup var memory: MemoryOptions

        func validate() throws {
            // Written on this machine: a bucket's address would be a folder named "s3:".
            for (option, path) in [("--report", report), ("--trace", trace)] {
                guard let path, let address = ObjectStores.notALocalPath(path) else { continue }
                throw ValidationError("\(option) \(path): the file is written on this machine, so give a local path, not \(address)")
            }
            // An unset variable (`--report "$DIR"`) would put the report's index.html over one
            // in the folder the command was started in.
            if report?.isEmpty == true {
                throw ValidationError("--report: give the report's folder; an empty value would write into the current folder")
            }
            if json && quiet { throw ValidationError("--json and --quiet cannot be used together") }
            if verbose && quiet { throw ValidationError("--quiet and --verbose cannot be used together") }
            try memory.checkRoomForImages()
        }

        func run() async throws {
            try await run(try loadPipeline(file))
        }

        /// Runs a pipeline already loaded, as `run` does a file's: `convert` runs the one it builds,
        /// with the signal handling it set up before (`given`), which the run takes over while it
        /// goes and leaves to it after, its own words for the failures it prints
        /// (`describingFailures`), and `sharded: false`: a conversion is whole, and a scheduler's
        /// array variables (its task's index) must not cut it down to a shard.
        func run(
            _ loaded: Pipeline, interruption given: Interruption? = nil, sharded: Bool = true, inputCount: Int? = nil,
            describingFailures: @escaping (String) -> String = { $0 }
        ) async throws {
            let logger = makeLogger(level: logLevel)
            var pipeline = loaded
            memory.apply(to: &pipeline)
            pipeline.sideWrites = sideWrites
            // A user who sets VIPS_CONCURRENCY has chosen libvips' threads: leave them as set.
            pipeline.configuration.vipsThreadsPerImage = ProcessInfo.processInfo.environment["VIPS_CONCURRENCY"] == nil ? 1 : nil
            // No more inputs are in flight than there are: a one-off's few need no warning.
            let shortfall = try OpenFileShortfall.check(
                inFlight: min(pipeline.definition.inFlight(fetchingRemoteInputs: true), inputCount ?? .max))
            let shard = sharded ? try sharding.resolve() : nil
            if let shard, !quiet, !json { printError("shard \(shard.shard) (\(shard.source))") }

            let recorder: RunRecorder?
            do throws(ReportWriterError) {
                recorder =
                    report != nil || trace != nil
                    ? try RunRecorder(definition: pipeline.definition, shard: shard?.shard, keepsTrace: trace != nil) : nil
            } catch {
                // Before the run: a long run must not end without its report.
                printError(
                    "cannot write the \(report != nil ? "report" : "trace"): \(error.path): \(error.reason)".escapingControlCharacters)
                throw ExitCode.failure
            }

            // Signal handling first: libdispatch opens its descriptors now, not once the run has
            // taken every one the limit allows (it stopped the process then).
            let started = Locked<PipelineRun?>(nil)
            // Before the run, a signal stops the listing of the inputs (a bucket's requests).
            let stopping = Locked(false)
            let stopRun: @Sendable (Int32) -> Void = { signal in
                // Nobody reads the output any more: nothing to say, only the work to wind down.
                if signal != SIGPIPE { printError("\(Interruption.describe(signal)): finishing the work in progress…") }
                stopping.withLock { $0 = true }
                started.withLock { $0 }?.cancel(stoppingRunningWorkAfter: PipelineRun.signalGrace)
            }
            let interruption = given ?? Interruption(stopRun)
            given?.hand(to: stopRun)
            defer { if given == nil { interruption.stop() } }
            if interruption.received != nil { stopping.withLock { $0 = true } }
            pipeline.stopsPlanning = { stopping.withLock { $0 } }
            let run: PipelineRun
            do {
                run = try pipeline.run(force: force, shard: shard?.shard)
            } catch {
                // Stopped while the inputs were found: nothing ran, and the status is the signal's.
                if let signal = interruption.received {
                    printError("stopped before the run began: nothing was made")
                    throw ExitCode.afterSignal(signal)
                }
                run = try exitingOnInvalidFile { () throws(PipelineFileError) -> PipelineRun in throw error }
            }
            started.withLock { $0 = run }
            if interruption.received != nil { run.cancel(stoppingRunningWorkAfter: PipelineRun.signalGrace) }

            let output = RunOutput(
                mode: json ? .json : quiet ? .quiet : .progress, verbose: verbose, logger: logger, run: run,
                baseDirectory: pipeline.definition.baseDirectory, shard: shard?.shard, describingFailures: describingFailures)
            var summary: RunSummary?
            for await event in run {
                if case .started(let inputs, _, _) = event, let warning = shortfall?.warning(inputs: inputs) { printError(warning) }
                output.handle(event)
                recorder?.record(event)
                if case .finished(let final) = event { summary = final }
            }
            guard let summary else { throw ExitCode.failure }
            if let problem = summary.manifestProblem { printError("error: \(problem)") }
            // Nothing a run makes per input should outlive it: this number returns to zero.
            logger.debug("libvips images still alive after the run", metadata: ["count": "\(VipsImage.liveCount)"])
            // The summary first: a report or trace that cannot be written does not take it along.
            if !quiet && !json {
                printOutput(Self.describe(summary, locations: output.locations))
                if !output.chosenQualities.isEmpty { printOutput("qualities chosen: \(output.chosenQualities.description)") }
            }
            var filesWritten = true
            if let recorder { filesWritten = await writeFiles(recorder, inputDirectory: pipeline.definition.baseDirectory) }
            if let signal = interruption.received { throw ExitCode.afterSignal(signal) }
            try StandardOutput.exitIfAWriteFailed()
            if summary.failed > 0 || summary.manifestProblem != nil { throw ExitCode.someItemsFailed }
            if !filesWritten { throw ExitCode.failure }
        }

        /// The trace and report files, absolute, for the plan to check against the inputs.
        private var sideWrites: [SideWrite] {
            var writes: [SideWrite] = []
            if let trace {
                writes.append(SideWrite(what: "the trace (--trace)", path: URL(fileURLWithPath: trace).standardizedFileURL.path))
            }
            if let report {
                let folder = URL(fileURLWithPath: report).standardizedFileURL
                for name in [ReportWriter.jsonFileName, ReportWriter.htmlFileName] {
                    writes.append(SideWrite(what: "the report (--report)", path: folder.appendingPathComponent(name).path))
                }
            }
            return writes
        }

        /// Writes the report and the trace, each whether or not the other could be; false when
        /// one could not (said on standard error).
        private func writeFiles(_ recorder: RunRecorder, inputDirectory: URL) async -> Bool {
            var written = true
            if let report {
                do {
                    try await ReportWriter.write(recorder, to: URL(fileURLWithPath: report), inputDirectory: inputDirectory)
                } catch {
                    printError("error: \(error)".escapingControlCharacters)
                    written = false
                }
            }
            if let trace {
                do throws(ReportWriterError) {
                    try recorder.writeTrace(to: trace)
                } catch {
                    printError("error: cannot write the trace to \(trace): \(error.reason)".escapingControlCharacters)
                    written = false
                }
            }
            return written
        }

        /// The summary line: inputs, outcomes, outputs and where they went, time and rate.
        static func describe(_ summary: RunSummary, locations: OutputLocations) -> String {
            var parts = [
                "\(summary.inputs) input\(summary.inputs == 1 ? "" : "s")",
                "\(summary.succeeded) succeeded", "\(summary.failed) failed",
            ]
            if summary.notRun > 0 { parts.append("\(summary.notRun) not run") }
            let upToDate = summary.outputsUpToDate > 0 ? ", \(summary.outputsUpToDate) up to date" : ""
            let place: String = locations.summary().map { "; \($0)" } ?? ""
            // A rate of inputs that all failed would read as images made.
            let rate = summary.succeeded > 0 ? String(format: " (%.1f images/s)", summary.imagesPerSecond) : ""
            return parts.joined(separator: ", ")
                + "; \(summary.outputsWritten) output\(summary.outputsWritten == 1 ? "" : "s") written\(upToDate)"
                + " in " + String(format: "%.2f s", summary.seconds) + rate + place
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A logger that writes to standard error at `level`, one line an event.
func makeLogger(level: Logger.Level) -> Logger {
    var logger = Logger(label: "pipeline") { EscapingLogHandler(label: $0) }
    logger.logLevel = level
    return logger
}

/// Turns the first Ctrl-C (SIGINT) or SIGTERM into a callback instead of ending the process, so
/// that the run can wind down and leave no temporary files; a Ctrl-C after that exits at once
/// (unless it is the first one sent twice: `repeatWindow`), and a SIGTERM after that changes nothing.
///
/// SIGTERM is what `kill`, systemd and Kubernetes send to stop a process, before SIGKILL after a
/// grace period: it gets the same orderly stop as Ctrl-C. The other signals that would end the
/// process and that nothing here gives a meaning (`forwarded`) are handled as SIGTERM.
///
/// SIGPIPE is ignored, so that a write to a closed pipe fails instead of killing the process;
/// when standard output is a pipe or socket whose reader goes away, the callback gets SIGPIPE,
/// once, as if it were the first signal: the run stops as it would on Ctrl-C.
final class Interruption {
    static let signals = [SIGINT, SIGTERM]
    /// Signals sent on as SIGTERM: each ends a process by default, and nothing here gives it
    /// another meaning, so it stops the work the orderly way rather than mid-write. SIGHUP (a
    /// terminal closed) is one, except where `serve` reloads on it. Left as they are: SIGQUIT
    /// (a core dump of a hung process, on purpose), SIGPROF (profilers), SIGKILL, and the
    /// signals of a fault (SIGSEGV, SIGBUS, …). The next run removes what those leave.
    static let forwarded = [SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU, SIGPWR, SIGIO, SIGSTKFLT] + realTimeSignals

    /// The real-time signals the C library leaves to programs: each ends a process by default.
    static var realTimeSignals: [Int32] { Array(__libc_current_sigrtmin()...__libc_current_sigrtmax()) }

    /// Sends each of `numbers` on as SIGTERM, and ignores SIGXFSZ, so that a file past the size
    /// limit (`ulimit -f`) fails its write and is reported with its output, where the signal
    /// would end the process. A handler that sends SIGTERM needs no descriptor, which a run near
    /// its open-file limit cannot spare.
    static func forwardAsSIGTERM(_ numbers: [Int32] = forwarded) {
        signal(SIGXFSZ, SIG_IGN)
        for number in numbers {
            // kill(2) is safe in a signal handler.
            signal(number) { _ in kill(getpid(), SIGTERM) }
        }
    }
    /// A Ctrl-C this soon after the first is the same one sent twice: `timeout -s INT` and a
    /// kill of the process group send one to the process and one to its group. A person
    /// pressing it again takes longer.
    static let repeatWindow: Duration = .milliseconds(500)

    /// Whether signal `number`, come at `now` after `earlier`, is Ctrl-C pressed again: not a
    /// SIGTERM, nor the first Ctrl-C sent twice (`repeatWindow`).
    static func isCtrlCAgain(_ number: Int32, after earlier: (signal: Int32, at: ContinuousClock.Instant), at now: ContinuousClock.Instant)
        -> Bool
    {
        number == SIGINT && !(earlier.signal == SIGINT && now - earlier.at < repeatWindow)
    }
    private let sources: [any DispatchSourceSignal]
    /// The first signal received, if any, and when.
    private let first = Locked<(signal: Int32, at: ContinuousClock.Instant)?>(nil)
    /// Set by `stop()`: a reader of standard output gone away after that changes nothing.
    private let stopped = Locked(false)
    /// What the first signal does: it changes as a command goes from one part to the next.
    private let handler: Locked<@Sendable (Int32) -> Void>

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        let first = self.first
        let stopped = self.stopped
        let current = Locked(handler)
        self.handler = current
        signal(SIGPIPE, SIG_IGN)
        Self.forwardAsSIGTERM()
        Self.watchStandardOutput {
            guard !stopped.withLock({ $0 }) else { return }
            let isFirst = first.withLock { received in
                defer { received = received ?? (SIGPIPE, .now) }
                return received == nil
            }
            if isFirst { current.withLock { $0 }(SIGPIPE) }
        }
        sources = Self.signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let now = ContinuousClock.now
                let earlier = first.withLock { received in
                    defer { received = received ?? (number, now) }
                    return received
                }
                guard let earlier else { return current.withLock { $0 }(number) }
                // Ctrl-C pressed again: someone at the terminal wants out now. A repeated
                // SIGTERM is no such request (`timeout` and a kill of the process group send one
                // to the process and one to its group), nor is a Ctrl-C that follows the first at
                // once (`repeatWindow`): the stop goes on.
                if Self.isCtrlCAgain(number, after: earlier, at: now) { ProcessEnd.exit(ExitCode.afterSignal(number).rawValue) }
            }
            source.resume()
            return source
        }
        Self.waitUntilHandled(Self.signals)
    }

    /// Waits, a bounded while, until libdispatch has put its own handler in place of `SIG_IGN`
    /// for each of `numbers`: a signal source's `resume()` returns before dispatch's manager
    /// thread installs it, and a signal that comes in between is ignored and lost (a `convert`
    /// reading standard input then waited for ever).
    static func waitUntilHandled(_ numbers: [Int32]) {
        let ignored = unsafeBitCast(SIG_IGN, to: Int.self)
        let deadline = ContinuousClock.now + .seconds(2)
        for number in numbers {
            var action = sigaction()
            // Polled: the installation is dispatch's own, and signals nothing to wait on.
            while sigaction(number, nil, &action) == 0, unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == ignored,
                ContinuousClock.now < deadline
            {
                usleep(200)
            }
        }
    }

    /// The first signal received, or nil.
    var received: Int32? { first.withLock { $0?.signal } }

    /// Gives the first signal to `handler` from now on, in place of the one before; one that
    /// came before is in `received`.
    func hand(to handler: @escaping @Sendable (Int32) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    func stop() {
        stopped.withLock { $0 = true }
        for source in sources { source.cancel() }
        for number in Self.signals + Self.forwarded + [SIGXFSZ] { signal(number, SIG_DFL) }
    }

    /// What a signal did, for the line that says the run is stopping.
    static func describe(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "interrupted"
        case SIGTERM: "terminated"
        default: "stopped by signal \(signal)"
        }
    }

    /// When standard output is a pipe or a socket, watches it on a thread of its own: a reader
    /// gone away shows as an error on it, and calls `readerGone`. No watch for a terminal or a
    /// file, which have no reader to lose. The thread needs no descriptor of its own, and ends
    /// with the process if the reader stays.
    private static func watchStandardOutput(_ readerGone: @escaping @Sendable () -> Void) {
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0, info.st_mode & S_IFMT == S_IFIFO || info.st_mode & S_IFMT == S_IFSOCK else { return }
        Thread.detachNewThread {
            // Events 0: only an error or a hang-up is wanted, never "writable".
            var watched = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            // Interrupted waits are retried a bounded number of times.
            for _ in 0..<1000 {
                let ready = poll(&watched, 1, -1)
                if ready < 0, errno == EINTR { continue }
                if ready > 0, watched.revents & Int16(POLLERR | POLLHUP) != 0 { readerGone() }
                return
            }
        }
    }
}
