#if Server
import Foundation
import Logging
import PipelineKit
import ServiceLifecycle
import StandardProcessors
import TestSupport

@testable import PipelineServer

/// A `PipelineServer` on a free loopback port, started by a test and stopped by it (`stop()`,
/// which shuts it down gracefully and waits for it).
final class RunningServer: Sendable {
    let port: Int
    /// The server itself, to reload.
    let server: PipelineServer
    /// What makes the inputs as the server started, to see its lanes and queue.
    let maker: InputMaker
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Serves `json` (a pipeline file whose relative paths are in `directory`, and whose steps
    /// are `processors`'); stopping waits at most `drainTimeout` for the requests in flight,
    /// when given, as `pipeline serve` does; `maxMemory` is `--max-memory`'s limit, in bytes.
    init(
        _ json: String, in directory: TemporaryDirectory, settings: PipelineServer.Settings = .init(port: 0),
        processors: ProcessorRegistry = .standard, drainTimeout: Duration? = nil, maxMemory: Int64? = nil
    ) async throws {
        var pipeline = try Self.pipeline(json, in: directory, processors: processors)
        if let maxMemory { pipeline.configuration.maxMemory = maxMemory }
        var logger = Logger(label: "serve-test")
        logger.logLevel = .warning
        let (urls, continuation) = AsyncStream.makeStream(of: String.self)
        var settings = settings
        settings.port = 0
        let server = try PipelineServer(pipeline: pipeline, settings: settings, logger: logger) { url in
            continuation.yield(url)
            continuation.finish()
        }
        var configuration = ServiceGroupConfiguration(services: [server], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout
        let group = ServiceGroup(configuration: configuration)
        let task = Task { try await group.run() }
        // Bounded: a server that never listens fails the test instead of hanging it.
        let timeout = Task {
            try await Task.sleep(for: .seconds(120))
            continuation.finish()
        }
        defer { timeout.cancel() }
        var first: String?
        for await url in urls {
            first = url
            break
        }
        guard let first, let port = Int(first.split(separator: ":").last ?? "") else {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw LoopbackHTTPClient.Failure(description: "the server did not say where it listens")
        }
        self.port = port
        self.server = server
        maker = server.responder.maker
        self.group = group
        self.task = task
    }

    /// Sends a request to the server (see `LoopbackHTTPClient`), failing after `timeout` seconds
    /// without a byte of the answer. The server runs in the test process, on the Swift threads
    /// the other suites' tests share, and under a sanitizer those can keep it from running for
    /// minutes: the default waits that long rather than failing a request that was never late.
    func request(
        _ target: String, method: String = "GET", headers: [String: String] = [:], timeout: Double = 900
    ) async throws -> LoopbackHTTPClient.Response {
        try await LoopbackHTTPClient.request(method, port: port, target: target, headers: headers, timeout: timeout)
    }

    /// The pipeline of `json`, as a server of it in a test answers: with `serve.timeout` an hour
    /// when the file leaves it at its default. The server runs in the test process, where a
    /// sanitizer can keep its threads from running for minutes: a test that means to reach the
    /// timeout sets its own.
    static func pipeline(_ json: String, in directory: TemporaryDirectory, processors: ProcessorRegistry = .standard) throws
        -> Pipeline
    {
        let pipeline = try PipelineHarness.pipeline(json, in: directory, processors: processors)
        guard pipeline.definition.serve.timeout == ServeSettings.defaultTimeout else { return pipeline }
        var definition = pipeline.definition
        definition.serve.timeout = 3600
        var patient = Pipeline(definition: definition, fileName: pipeline.fileName)
        patient.environment = pipeline.environment
        patient.configuration = pipeline.configuration
        patient.sideWrites = pipeline.sideWrites
        return patient
    }

    /// Stops accepting, lets the requests in flight finish, and waits for the server to end.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

extension RunningServer {
    /// A server of one input, `in/photo.jpg`, whose one output, `held`, waits in a step until
    /// the file `release` exists, as a step nothing can interrupt (an encode) would; `extra` is
    /// more of the pipeline file (`"serve": {…}`).
    static func holdingItsRun(extra: String = "", drainTimeout: Duration) async throws -> (
        server: RunningServer, directory: TemporaryDirectory, release: String
    ) {
        let directory = try TemporaryDirectory()
        let (json, release) = try heldPipeline(in: directory, extra: extra)
        let server = try await RunningServer(json, in: directory, processors: heldProcessors, drainTimeout: drainTimeout)
        return (server, directory, release)
    }

    /// The pipeline file of `holdingItsRun`, with `outputs` after `held`, in `directory`, where
    /// it writes its photo: the JSON, and the file that lets the step go.
    static func heldPipeline(in directory: TemporaryDirectory, outputs: [String] = [], extra: String = "") throws -> (
        json: String, release: String
    ) {
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/photo.jpg")
        let release = directory.path + "/release"
        let step = #"{"sleep": {"seconds": 0, "input": "photo", "after": "\#(release)"}}"#
        let held = #"{"name": "held", "steps": [\#(step)], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
        return (PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [held] + outputs, extra: extra), release)
    }

    /// The steps of `heldPipeline`: the standard ones and the test's `sleep`.
    static let heldProcessors = ProcessorRegistry.standard.adding(SleepingProcessor.self)
}

/// Runs `body` with a server of `json`, stopping the server afterwards whatever `body` does.
func withServer<Result>(
    _ json: String, in directory: TemporaryDirectory, settings: PipelineServer.Settings = .init(port: 0),
    processors: ProcessorRegistry = .standard, maxMemory: Int64? = nil, _ body: (RunningServer) async throws -> Result
) async throws -> Result {
    let server = try await RunningServer(json, in: directory, settings: settings, processors: processors, maxMemory: maxMemory)
    do {
        let result = try await body(server)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
}
#endif
