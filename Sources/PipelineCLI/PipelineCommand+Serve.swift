#if Server
import ArgumentParser
import Foundation
import Logging
import PipelineKit
import PipelineServer
import ServiceLifecycle
import UnixSignals
import Vips

extension PipelineCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer HTTP requests for a pipeline file's outputs, making each on the first request.",
            discussion: """
                GET /{output}/{input} answers with the file `pipeline run` would make for that output of \
                that input ({input} is its {dir}/{name}), from disk when a run made it and it is up to \
                date, else made now through the same steps and limits and kept for the next run. \
                ?width= picks one of the output's widths; an output with formats follows Accept \
                (?format= forces one). /healthz answers ok. Prints the address once listening. Watches \
                the pipeline file and the inputs' folders as `watch` does: an edited file is served from \
                then on (an invalid one is reported and the last valid one kept), and inputs added are \
                served. SIGHUP reads the pipeline file and the inputs again. SIGTERM (or Ctrl-C, or \
                another signal that would end it, but SIGQUIT) stops accepting, lets the requests in \
                flight finish and exits 0; Ctrl-C pressed again cuts them off. See docs/serving.md.
                """
        )

        @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
        var file: String

        @ArgumentParser.Option(help: "The address to listen on.")
        var host = "127.0.0.1"

        // Taken whatever it starts with, so that -1 is refused as a port, not missed as a flag.
        @ArgumentParser.Option(parsing: .unconditional, help: "The port to listen on; 0 picks a free one (the address printed has it).")
        var port = 8080

        @ArgumentParser.Option(
            help: "How much to log on standard error (info logs every request): trace, debug, info, notice, warning, error or critical."
        )
        var logLevel: Logger.Level = .warning

        @OptionGroup var memory: MemoryOptions

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port: expected 0 to 65535, not \(port)") }
            try memory.checkRoomForImages()
        }

        func run() async throws {
            // SIGHUP reads the pipeline file and the inputs again, as nginx reloads its
            // configuration, rather than ending the server as its default action would. Trapped
            // first: one that comes while the inputs are listed and planned (seconds, for a large
            // folder or a bucket) is kept, and reloads once the server is up.
            let hangups = await UnixSignalsSequence(trapping: .sighup)
            Interruption.waitUntilHandled([SIGHUP])
            let stops = await ServeStopSignals()
            defer { stops.stop() }
            // A client gone away must fail its write, not end the server. The signals a run
            // handles as SIGTERM drain the server as SIGTERM does, but SIGHUP, which reloads.
            signal(SIGPIPE, SIG_IGN)
            Interruption.forwardAsSIGTERM(Interruption.forwarded.filter { $0 != SIGHUP })
            let logger = makeLogger(level: logLevel)
            var pipeline = try loadPipeline(file)
            memory.apply(to: &pipeline)
            // A signal while a bucket is listed ends the listing.
            pipeline.stopsPlanning = { stops.received != nil }
            let file = self.file
            let planned = Result { () throws(PipelineFileError) in
                try PipelineServer(pipeline: pipeline, settings: .init(host: host, port: port), logger: logger) { url in
                    // At once: standard output is usually a pipe, which stdio would hold back.
                    try? FileHandle.standardOutput.write(contentsOf: Data("Serving \(file) on \(url)\n".utf8))
                } onStopping: {
                    printError("stopping: no new connections; finishing the requests in flight…")
                }
            }
            if let signal = stops.received { try Self.stopBeforeServing(file, after: signal) }
            let server = try exitingOnInvalidFile { () throws(PipelineFileError) in try planned.get() }
            let watcher: PipelineWatcher
            do {
                watcher = try PipelineWatcher(pipelineFile: URL(fileURLWithPath: file), definition: pipeline.definition)
            } catch {
                // Serving matters more than seeing changes (a busy node's inotify instances all
                // taken): the server goes on, reloading at SIGHUP alone.
                printError("warning: \(file): \(error): changes to it and its inputs go unseen; send SIGHUP to reload")
                watcher = try PipelineWatcher(
                    pipelineFile: URL(fileURLWithPath: file), definition: pipeline.definition, watching: false)
            }
            defer { watcher.stop() }
            let reloading = Reloading(
                server: server, pipeline: pipeline, watcher: watcher, file: file, memory: memory, logger: logger, hangups: hangups)
            var configuration = ServiceGroupConfiguration(
                services: [.init(service: server), .init(service: reloading, successTerminationBehavior: .ignore)], logger: logger)
            configuration.maximumGracefulShutdownDuration = .seconds(pipeline.definition.serve.drainTimeout)
            guard let serving = stops.serve(ServiceGroup(configuration: configuration)) else {
                try Self.stopBeforeServing(file, after: stops.received ?? SIGTERM)
            }
            do {
                try await serving.value
            } catch {
                printError("error: \(file): cannot serve on \(host):\(port): \(PipelineServer.describe(error))")
                throw ExitCode.failure
            }
            // What was cut off when the server stopped before its requests were answered.
            let cut = server.requestsCutOff
            let cutOff =
                cut == 0
                ? "no request was in flight; any run still going was cancelled"
                : "\(cut) request\(cut == 1 ? "" : "s") still in flight \(cut == 1 ? "was" : "were") cut off and any run still going cancelled"
            if stops.cutShort {
                printError("stopped serving \(file) at a second Ctrl-C: \(cutOff)")
                throw ExitCode.failure
            }
            if server.stoppedPastDrainTimeout {
                printError(
                    "stopped serving \(file) after serve.drainTimeout (\(Units.text(seconds: pipeline.definition.serve.drainTimeout))): \(cutOff)"
                )
                throw ExitCode.failure
            }
            printError("stopped serving \(file)")
        }

        /// Ends the command for a signal that came before the server listened.
        private static func stopBeforeServing(_ file: String, after signal: Int32) throws -> Never {
            printError("stopped before serving \(file): no request was taken and nothing was made")
            throw ExitCode.afterSignal(signal)
        }

        /// Serves the pipeline file as it is now and the inputs its folders hold now: reloads the
        /// server after each settled batch of changes. A file that no longer loads or plans is
        /// reported, and the server goes on with the last valid one.
        // Described by its file alone: service-lifecycle logs its services, and the pipeline
        // it holds has secrets (the signing key, `fetch.headers`).
        private struct Reloading: Service, CustomStringConvertible {
            var description: String { "Reloading(\(file))" }

            let server: PipelineServer
            let pipeline: Pipeline
            let watcher: PipelineWatcher
            let file: String
            let memory: MemoryOptions
            let logger: Logger
            /// SIGHUP, trapped as the command starts.
            let hangups: UnixSignalsSequence

            func run() async throws {
                let watcher = self.watcher
                var pipeline = self.pipeline
                let hangups = Task { [hangups = self.hangups] in
                    for await _ in hangups {
                        logger.info("SIGHUP: reloading")
                        watcher.reportEverythingChanged()
                    }
                }
                defer { hangups.cancel() }
                await withGracefulShutdownHandler {
                    // Whether the file on disk failed to load or plan when last read: read again
                    // at the next change, whichever file it is, as `watch` does, so that the
                    // edit is served once a change to the inputs mends its plan.
                    var fileFailed = false
                    for await changes in watcher.changes {
                        logger.debug("changes", metadata: ["paths": "\(changes.paths)"])
                        // Nothing else changed than a file that no longer loads: the server answers as it did.
                        // After the start, no inputs is a state a server answers 404 in, not a failure.
                        guard
                            let current = PipelineCommand.pipeline(
                                after: changes, keeping: pipeline, file: file, memory: memory, watcher: watcher, rereading: fileFailed,
                                allowingNoInputs: true)
                        else {
                            // Stopping: no reload is wanted, and its planning was cut short.
                            if pipeline.stopsPlanning() { break }
                            fileFailed = true
                            // A file the last valid pipeline's outputs are made with changed (a
                            // profile overwritten): what was made with it is out of date, and is made
                            // again when asked for, as a run would, rather than answered from the last
                            // plan's state. (Not the fallback image: the one read last goes on.)
                            let beside = pipeline.definition.filesOutputsAreMadeWith.flatMap(PipelineWatcher.changePaths)
                            if beside.contains(where: changes.mayInclude) {
                                do { try server.reload(pipeline, allowingNoInputs: true) } catch { printError("\(error)") }
                            }
                            continue
                        }
                        pipeline = current.pipeline
                        fileFailed = current.isLastValid
                        do {
                            try server.reload(pipeline, allowingNoInputs: true)
                            // The inputs were read again, with a pipeline file that was not.
                            let what = current.isLastValid ? "reloaded the inputs, with the last valid pipeline" : "reloaded"
                            logger.info("\(what)", metadata: ["changes": "\(changes.count)"])
                        } catch {
                            if pipeline.stopsPlanning() { break }
                            printError("\(error)")
                            printError("\(file): serving as before")
                        }
                        for problem in watcher.takeProblems() { printError("warning: \(problem)") }
                    }
                } onGracefulShutdown: {
                    watcher.stop()
                }
            }
        }
    }
}
#endif
