import ArgumentParser
import Foundation
import Logging
import PipelineKit
import Vips

extension PipelineCommand {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a pipeline file, then again whenever an input, the pipeline file or a step's image changes.",
            discussion: """
                Runs once, then watches the inputs' folders, list files, the pipeline file and the images \
                steps load (composite overlays); after a burst of changes has settled it runs again, \
                incrementally, and prints one line. Remote (http/https) inputs are not watched. A pipeline \
                file that becomes invalid is reported and the last valid one is kept. Ctrl-C (or SIGTERM) \
                lets the work in progress finish, leaves no temporary file and exits 130 (143). When \
                standard output cannot be written (a full disk), it stops after that run and exits 1.
                """
        )

        @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
        var file: String

        @Flag(name: .shortAndLong, help: "Print a line for every output written.")
        var verbose = false

        // Unconditional, so that "-1" is this option's value, refused by validate(), and not an option.
        @ArgumentParser.Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "How long the watched files must stay unchanged before a run starts (a burst of copies is one run): 300ms, 2s, …",
                valueName: "duration"))
        var debounce = "300ms"

        @ArgumentParser.Option(help: "How much to log on standard error: trace, debug, info, notice, warning, error or critical.")
        var logLevel: Logger.Level = .warning

        @OptionGroup var memory: MemoryOptions

        func validate() throws {
            guard let seconds = Units.seconds(in: debounce), seconds > 0, seconds <= 3600 else {
                throw ValidationError("--debounce: expected a duration above 0 such as 300ms or 2s, up to 1h, not \"\(debounce)\"")
            }
            try memory.checkRoomForImages()
        }

        func run() async throws {
            let logger = makeLogger(level: logLevel)
            var pipeline = try loadPipeline(file)
            memory.apply(to: &pipeline)
            let watcher = try makeWatcher(for: pipeline)
            defer { watcher.stop() }

            // The run in progress, for the signal handler to stop.
            let current = Locked<PipelineRun?>(nil)
            let interruption = Interruption { signal in
                if signal != SIGPIPE { printError("\(Interruption.describe(signal)): finishing the work in progress…") }
                watcher.stop()
                current.withLock { $0?.cancel(stoppingRunningWorkAfter: PipelineRun.signalGrace) }
            }
            defer { interruption.stop() }

            // The first run: a pipeline that cannot run now (clashing outputs, no inputs) ends
            // the command as `run` would, with status 2.
            let first = try exitingOnInvalidFile { () throws(PipelineFileError) in try pipeline.run() }
            await perform(
                first, label: "run", baseDirectory: pipeline.definition.baseDirectory, current: current, interruption: interruption,
                logger: logger)
            reportProblems(watcher)
            // Lines a watch cannot print are runs no one hears of: it stops as `run` does.
            try StandardOutput.exitIfAWriteFailed()
            // Stopped during the first run: there is no watching to announce.
            if let signal = interruption.received { throw ExitCode.afterSignal(signal) }
            printError(
                "watching \(watcher.watchedFolderCount) folder\(watcher.watchedFolderCount == 1 ? "" : "s") for changes; Ctrl-C to stop")

            // Whether the file on disk failed to load or plan when last read: read again at the
            // next change, whichever file it is, as a change to the inputs may mend its plan.
            var fileFailed = false
            for await changes in watcher.changes {
                if interruption.received != nil { break }
                logger.debug("changes", metadata: ["paths": "\(changes.paths)"])
                // Nothing else changed than a file that no longer loads: the outputs are as they were.
                guard
                    let reloaded = PipelineCommand.pipeline(
                        after: changes, keeping: pipeline, file: file, memory: memory, watcher: watcher, rereading: fileFailed)
                else {
                    fileFailed = true
                    continue
                }
                pipeline = reloaded.pipeline
                fileFailed = reloaded.isLastValid
                guard let run = await startRun(of: pipeline, after: changes, interruption: interruption) else { continue }
                let count = changes.count
                await perform(
                    run, label: "re-run (\(count) change\(count == 1 ? "" : "s"))", baseDirectory: pipeline.definition.baseDirectory,
                    current: current, interruption: interruption, logger: logger)
                reportProblems(watcher)
                try StandardOutput.exitIfAWriteFailed()
            }
            if let signal = interruption.received { throw ExitCode.afterSignal(signal) }
            reportProblems(watcher)
            printError("stopped watching \(file)")
            throw ExitCode.failure
        }

        /// The watcher of the pipeline file and its inputs' folders, with `--debounce`'s quiet
        /// period; the command fails when it cannot watch.
        private func makeWatcher(for pipeline: Pipeline) throws -> PipelineWatcher {
            let quiet = Duration.milliseconds(Int64(((Units.seconds(in: debounce) ?? 0.3) * 1000).rounded()))
            do {
                // A constant stream of changes still runs, after at most four quiet periods (or a few seconds).
                return try PipelineWatcher(
                    pipelineFile: URL(fileURLWithPath: file), definition: pipeline.definition,
                    debounce: .init(quietPeriod: quiet, longestWait: max(.seconds(5), quiet * 4)))
            } catch {
                printError("error: \(error)")
                throw ExitCode.failure
            }
        }

        /// A run of `pipeline` for `changes`, or nil when its plan fails: clashing outputs, no
        /// inputs left (said, with what it stops: the next change may mend it). Refused because
        /// a run of another pipeline file is writing the same outputs, it is tried again every
        /// second until that run has finished, or a signal comes.
        private func startRun(of pipeline: Pipeline, after changes: FileChanges, interruption: Interruption) async -> PipelineRun? {
            let count = changes.count
            var waiting = false
            while interruption.received == nil {
                do {
                    return try pipeline.run()
                } catch let error where error.isWaitingForAnotherRun {
                    if !waiting {
                        printError(error.description)
                        printError("re-run waits (\(count) change\(count == 1 ? "" : "s")): it starts once that run has finished")
                        waiting = true
                    }
                    try? await Task.sleep(for: .seconds(1))
                } catch {
                    printError(error.description)
                    printError(
                        "no re-run (\(count) change\(count == 1 ? "" : "s")): nothing is made until the inputs or \(file) no longer "
                            + "fail the plan")
                    return nil
                }
            }
            return nil
        }

        /// Goes through one run, printing its failures as `run` does and then one line.
        private func perform(
            _ run: PipelineRun, label: String, baseDirectory: URL, current: Locked<PipelineRun?>, interruption: Interruption,
            logger: Logger
        ) async {
            current.withLock { $0 = run }
            // A signal that came before the handler could see this run.
            if interruption.received != nil { run.cancel(stoppingRunningWorkAfter: PipelineRun.signalGrace) }
            defer { current.withLock { $0 = nil } }
            let output = RunOutput(
                mode: .quiet, verbose: verbose, logger: logger, run: run, baseDirectory: baseDirectory)
            var summary: RunSummary?
            for await event in run {
                output.handle(event)
                if case .finished(let final) = event { summary = final }
            }
            guard let summary else { return }
            printOutput("\(label): \(Run.describe(summary, locations: output.locations))")
        }

        private func reportProblems(_ watcher: PipelineWatcher) {
            for problem in watcher.takeProblems() { printError("warning: \(problem)") }
        }
    }
}

extension PipelineCommand {
    /// The pipeline to go on with after a batch of `changes`, for `watch` and `serve`: the file
    /// loaded again when it or its focus file may have changed (and watched as it now is), or the last valid one,
    /// `pipeline`, when it no longer loads or plans (said on standard error, and `isLastValid`). Nil when nothing else
    /// changed than a file that is not valid, so nothing needs doing. `rereading`: the file failed when last read,
    /// and is read again whatever changed, as a change to the inputs may mend its plan. `allowingNoInputs`: a plan
    /// that finds no input is taken (a server's), not refused (a watch's, which then runs nothing).
    static func pipeline(
        after changes: FileChanges, keeping pipeline: Pipeline, file: String, memory: MemoryOptions, watcher: PipelineWatcher,
        rereading: Bool = false, allowingNoInputs: Bool = false
    ) -> (pipeline: Pipeline, isLastValid: Bool)? {
        // The focus file, the images steps read (overlays), the ICC profiles outputs embed and the server's fallback image are
        // checked with the pipeline file: a change to any loads them all again, so one removed
        // or broken is refused as it would be at the start, and the last valid pipeline goes on
        // (a server with the fallback image it read then).
        let definition = pipeline.definition
        let checked =
            [watcher.pipelineFilePath] + definition.filesOutputsAreMadeWith + (definition.serve.fallback.map { [$0.file.path] } ?? [])
        let read = checked.flatMap(PipelineWatcher.changePaths)
        guard rereading || read.contains(where: changes.mayInclude) else { return (pipeline, false) }
        var loaded: Pipeline?
        do throws(PipelineFileError) {
            // By the path made absolute at the start: a name relative to a working folder that
            // was removed and made again would name the file in the removed one.
            var edited = try Pipeline(
                contentsOf: URL(fileURLWithPath: watcher.pipelineFilePath), processors: processors, displayName: file)
            memory.apply(to: &edited)
            // What stops the last valid one's planning (serve's SIGTERM) stops this one's.
            edited.stopsPlanning = pipeline.stopsPlanning
            loaded = edited
            // Planned here too: a file that loads but finds no inputs (a glob edited to a folder
            // that is not there) is as invalid, and the last valid one goes on.
            _ = try edited.plan(allowingNoInputs: allowingNoInputs)
            watcher.watch(edited.definition)
            return (edited, false)
        } catch {
            // Stopped while its inputs were listed: the command is ending, with nothing to say.
            if pipeline.stopsPlanning() { return nil }
            printError(error.description)
            printError("\(file): keeping the last valid pipeline")
            // What may mend the file is watched with what the last valid one reads: the folders
            // the file as it is now reads (one made later), the files its problems are about.
            watcher.watch(definition, awaiting: loaded?.definition, filesAtFault: error.problems.compactMap(\.fileAtFault))
            // Changes that only concern the file (one of two overlays it waits for, a photo in a
            // folder only it reads) leave the last valid pipeline's outputs as they were.
            let otherChanges = watcher.paths(in: changes, readBy: definition).filter { !read.contains($0) }
            return otherChanges.isEmpty && !changes.overflowed ? nil : (pipeline, true)
        }
    }
}
