#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

/// Signals to `pipeline serve` past the plain SIGTERM of `ServeCommandTests`: SIGHUP reads the
/// pipeline file and inputs again, as nginx reloads, where its default action would end the
/// server; SIGTERM with a request still in flight past `serve.drainTimeout` cancels its run.
@Suite(.serialized) struct ServeSignalCommandTests {
    @Test func sigHUPReloadsAndTheServerGoesOn() throws {
        // Given a server of one input, logging at info
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [ServeCommandTests.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)

        // When it gets SIGHUP
        command.signal(SIGHUP)

        // Then it reloads the file, and answers as before
        let reloaded = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("reloaded") }
        #expect(reloaded != nil, "no reload after SIGHUP:\n\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)
        // and stops on SIGTERM as ever
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }

    @Test func aRequestInFlightPastTheDrainTimeoutIsCutOffAndItsRunCancelled() async throws {
        // Given an input on an origin that never answers while the test runs, and a drain
        // timeout of one second
        let silent = try SilentOrigin(seconds: 120)
        let origin = silent.server
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg")], outputs: [ServeCommandTests.thumb], extra: #""serve": {"drainTimeout": 1}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(directory)
        defer { command.kill() }
        let inFlight = Task.detached {
            try await LoopbackHTTPClient.request(port: port, target: "/thumb/127.0.0.1_\(origin.port)/photo.jpg")
        }
        try await waitUntil("the server fetches the input:\n\(command.transcript)") {
            !origin.requests(for: "/photo.jpg").isEmpty
        }

        // When SIGTERM comes
        command.signal(SIGTERM)

        // Then, the origin still silent, the server cuts the request off, cancels its run and
        // exits 1, saying why, with nothing written
        #expect(command.waitForExit(timeout: 120) == 1, "\(command.transcript)")
        #expect(command.transcript.contains("after serve.drainTimeout (1 s)"), "\(command.transcript)")
        let answer = try? await inFlight.value
        #expect(answer?.status != 200)
        let written = (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")) ?? []
        #expect(written.isEmpty, "\(written)")
    }
}
#endif
