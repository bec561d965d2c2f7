#if Server
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PipelineKit
import ServiceLifecycle
import Vips

/// The outputs a pipeline file declares, answered over HTTP as they are asked for:
/// `GET /{output}/{input}` answers with the file a run makes for that output of that input,
/// made now if no run has made it yet (the same steps, limits, memory budget, atomic writes and
/// journal as `pipeline run`, so the two share their files both ways).
///
/// A `Service`: run it in a `ServiceGroup`, whose graceful shutdown stops accepting connections
/// and lets the requests in flight finish.
///
/// ```swift
/// let server = try PipelineServer(pipeline: pipeline, settings: .init(port: 8080), logger: logger) { url in print(url) }
/// try await ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public struct PipelineServer: Service {
    /// Where the server listens and how it answers.
    public struct Settings: Sendable {
        /// The address to listen on: loopback unless told otherwise.
        public var host: String
        /// The port; 0 asks the system for a free one (the URL `onListening` gets has it).
        public var port: Int

        /// How long a connection may go without reading or writing anything before it is
        /// closed: a slow or stalled client holds a connection this long at most.
        public var idleTimeout: Duration

        /// Settings listening on `host` and `port`; the rest comes from the pipeline file's `serve` section.
        public init(host: String = "127.0.0.1", port: Int = 8080, idleTimeout: Duration = .seconds(30)) {
            self.host = host
            self.port = port
            self.idleTimeout = idleTimeout
        }
    }

    private let settings: Settings
    /// The pipeline file's `serve` section as the server started: what it listens with.
    private let serve: ServeSettings
    private let logger: Logger
    /// Counted across reloads: `/metrics` goes on from where it was.
    private let metrics = ServerMetrics()
    /// The one budget every run the server starts draws on, across reloads: the runs of
    /// concurrent requests keep together within the limit a batch run keeps within.
    private let memory: SharedMemoryBudget
    /// The lanes and each source's last run, across reloads: a plan's runs neither overlap an
    /// earlier plan's for one source nor add to the runs that may go at once.
    private let turns = RunTurns()
    /// What answers requests now; `reload(_:)` swaps it, and a request keeps the one it started with.
    private let current: Locked<ServerRoutes>
    /// What answers requests now.
    var responder: OutputResponder { current.withLock { $0.responder } }
    /// What answers `/info/{input}` now.
    var info: InfoResponder { current.withLock { $0.info } }
    /// The maker of every plan served since the start that may still have runs: the current
    /// one, and those a reload replaced while requests or runs still hold them (held weakly, so
    /// a replaced one goes once its last run ends). Stopping cancels and waits for them all.
    private let makers: Locked<[WeakMaker]>
    /// The warnings of the plan served now, as logged: a reload logs only those its plan adds,
    /// so that a folder's skipped entries are told once, not at each change to its other files.
    private let planWarnings = Locked<Set<String>>([])

    /// An `InputMaker` that a reload replaced, until nothing else holds it.
    private struct WeakMaker: Sendable {
        weak var maker: InputMaker?
    }
    private let onListening: @Sendable (String) -> Void
    private let onStopping: @Sendable () -> Void
    /// Whether the server stopped past its drain timeout: the service group cancelled it past
    /// its graceful shutdown's time (`serve.drainTimeout`), and the runs still going were
    /// cancelled, each ending with its files whole or gone.
    public var stoppedPastDrainTimeout: Bool { metrics.requestsCutOff != nil }

    /// How many requests were still in flight, and so cut off, when the server went past its
    /// drain timeout: 0 when it stopped within it, or when only runs no request waited for any
    /// more (answered at `serve.timeout`, or their clients gone) were still going.
    public var requestsCutOff: Int { metrics.requestsCutOff ?? 0 }

    /// Plans the pipeline (finding its inputs and checking every output path, as `run` does)
    /// and removes what a killed run left half-written; nothing listens until `run()`.
    ///
    /// - Parameters:
    ///   - pipeline: the pipeline file whose outputs are served.
    ///   - settings: where to listen and how long an idle connection stays open.
    ///   - logger: the access log and the server's messages.
    ///   - onListening: called with the server's URL (`http://127.0.0.1:8080`) once it accepts
    ///     connections.
    ///   - onStopping: called when the graceful shutdown starts: no new connections from then on.
    /// - Throws: `PipelineFileError` when the plan cannot be made, as `Pipeline.plan()` does.
    public init(
        pipeline: Pipeline, settings: Settings = Settings(), logger: Logger,
        onListening: @escaping @Sendable (String) -> Void = { _ in }, onStopping: @escaping @Sendable () -> Void = {}
    ) throws(PipelineFileError) {
        let plan = try pipeline.plan()
        pipeline.sweepLeftovers(plan)
        self.settings = settings
        serve = pipeline.definition.serve
        self.logger = logger
        self.onListening = onListening
        self.onStopping = onStopping
        memory = pipeline.sharedMemoryBudget()
        let routes = ServerRoutes(pipeline: pipeline, plan: plan, memory: memory, turns: turns, metrics: metrics, logger: logger)
        current = Locked(routes)
        makers = Locked([WeakMaker(maker: routes.responder.maker)])
        logWarnings(of: plan)
    }

    /// Answers from now on as `pipeline` describes, with the inputs its plan finds now: for a
    /// pipeline file that changed, or inputs added to (or removed from) its folders. Requests
    /// already under way finish as they began. Where the server listens, and how many
    /// connections it takes, and its memory budget, stay as they were when it started.
    ///
    /// With `allowingNoInputs`, a plan that finds no input is taken, not refused: inputs that
    /// have all been removed are then each 404, where keeping the last plan would answer "try
    /// again" for files that are gone. Without it, as at the start, no inputs is most often a path
    /// gone wrong, and refused as a run refuses it.
    ///
    /// - Throws: `PipelineFileError` when the plan cannot be made; the server then answers as
    ///   before.
    public func reload(_ pipeline: Pipeline, allowingNoInputs: Bool = false) throws(PipelineFileError) {
        let plan = try pipeline.plan(allowingNoInputs: allowingNoInputs)
        if plan.inputCount == 0 { logger.warning("no inputs now: every input is answered 404 until one is added") }
        let routes = ServerRoutes(pipeline: pipeline, plan: plan, memory: memory, turns: turns, metrics: metrics, logger: logger)
        current.withLock { $0 = routes }
        makers.withLock { makers in
            makers = makers.filter { $0.maker != nil } + [WeakMaker(maker: routes.responder.maker)]
        }
        logWarnings(of: plan)
    }

    /// Logs what `plan` warns of (entries of an input folder it cannot take, such as a FIFO or
    /// a link to nothing) that the plan served before did not: a name answered 404 for one of
    /// them is then explained where the operator looks.
    private func logWarnings(of plan: RunPlan) {
        let added = planWarnings.withLock { logged in
            defer { logged = Set(plan.warnings) }
            return plan.warnings.filter { !logged.contains($0) }
        }
        for warning in added { logger.warning("\(warning.escapingControlCharacters)") }
    }

    /// The most bytes a request's target (its path and query) may have: far more than any
    /// output's URL needs, and answered 414 before anything is looked up (`RequestLineMiddleware`).
    /// One past `maxHeaderBytes` never gets that far: the HTTP parser refuses it.
    static let maxTargetBytes = 8 * 1024

    /// The most bytes a request's headers may have, and any one header: far more than a browser
    /// sends, far less than would let a client hold much memory.
    static let maxHeaderBytes = 16 * 1024

    /// The most headers a request may have, however small: each costs the parser a little
    /// memory of its own.
    static let maxHeaderCount = 100

    /// Listens and answers until the service group shuts down gracefully: then new connections
    /// are refused, and the requests in flight (and the runs they wait for) finish first.
    public func run() async throws {
        let current = self.current
        let host = settings.host
        let port = settings.port
        let onListening = self.onListening
        let idle = settings.idleTimeout.components
        let idleTimeout = TimeAmount.nanoseconds(idle.seconds * 1_000_000_000 + idle.attoseconds / 1_000_000_000)
        let (metrics, logger) = (self.metrics, self.logger)
        // Idle connections are closed by IdleConnectionCloser, not by Hummingbird's read-only timer.
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ConnectionPersistenceInstaller(), IdleConnectionCloser(timeout: idleTimeout),
                UnreadableRequestReporter(metrics: metrics, logger: logger),
            ], idleTimeout: nil,
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: Self.maxHeaderBytes, maxHeaderListSize: Self.maxHeaderBytes, maxHeaderFieldCount: Self.maxHeaderCount))
        let application = Application(
            responder: CallbackResponder<ServerRequestContext> { request, context in
                try await current.withLock { $0 }.respond(to: request, context: context)
            },
            server: .http1(configuration: http),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                availableConnectionsDelegate: MaximumAvailableConnections(serve.maxConnections)),
            onServerRunning: { channel in
                let shown = host.contains(":") ? "[\(host)]" : host
                onListening("http://\(shown):\(channel.localAddress?.port ?? port)")
            },
            logger: logger)
        let makers = self.makers
        try await withTaskCancellationHandler {
            do {
                try await withGracefulShutdownHandler {
                    try await application.run()
                } onGracefulShutdown: { [onStopping] in
                    onStopping()
                }
            } catch is CancellationError {
                // Past the drain timeout: the application has closed its connections.
            }
            // None is left going when the server has stopped, whichever plan it was for: those
            // no request waits for any more (its client gone, or answered at `serve.timeout`)
            // are waited for within the drain timeout too.
            for maker in makers.withLock({ $0.compactMap(\.maker) }) { await maker.finishAll() }
        } onCancel: {
            // Past the drain timeout: the requests waiting for runs are let go once their
            // runs end, so those are cancelled (what is queued is skipped).
            // A reload's replaced makers too: their requests are as much in flight.
            metrics.cutOffRequestsInFlight()
            let going = makers.withLock { $0.compactMap(\.maker) }
            // A codec's call already under way (an AVIF encode) runs to its end, which may be
            // minutes: said now, so that the wait before the process ends is not a silent one.
            if let counts = going.first?.counts, counts.going + counts.waiting > 0 {
                logger.warning(
                    """
                    cutting off the requests in flight and cancelling their runs; the server stops once any codec call \
                    under way (an AVIF encode, say) has ended, which nothing can stop
                    """)
            }
            Task { for maker in going { await maker.cancelAll() } }
        }
    }
}

extension PipelineServer {
    /// Why the server stopped or could not start, in words: a socket's error as the system says
    /// it (`Address already in use`), not as the name of the call that failed with its errno.
    public static func describe(_ error: any Error) -> String {
        guard let failure = error as? IOError else { return "\(error)" }
        return String(cString: strerror(failure.errnoCode))
    }
}

extension PipelineServer: CustomStringConvertible {
    /// `PipelineServer(HOST:PORT)`: where it listens, and nothing of the pipeline file, whose
    /// `serve` section may hold the signing key (service-lifecycle logs its services so).
    public var description: String { "PipelineServer(\(settings.host):\(settings.port))" }
}
#endif
