#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

@testable import PipelineServer

/// Stopping past the drain timeout cuts off the requests still waiting at once, cancels every run
/// still going, those of a plan a reload replaced as well as the current plan's, stops their
/// libvips work on the lanes, and waits for each to end in a known state.
@Suite(.serialized) struct ServeDrainTests {
    @Test func stoppingPastTheDrainTimeoutCancelsTheRunsOfAPlanAReloadReplaced() async throws {
        // Given a request whose run waits for an origin that does not answer while the test runs
        let silent = try SilentOrigin(seconds: 600)
        let origin = silent.server
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg")], outputs: [ServeTests.thumb], extra: #""fetch": {"timeout": "600s", "retries": 0}"#)
        let server = try await RunningServer(json, in: directory, drainTimeout: .seconds(1))
        let replaced = server.maker
        let inFlight = Task { try? await server.request("/thumb/127.0.0.1_\(origin.port)/photo.jpg") }
        try await waitUntil("the server fetches the input") { !origin.requests(for: "/photo.jpg").isEmpty }

        // When the server reloads, then stops
        try server.server.reload(try RunningServer.pipeline(json, in: directory))
        #expect(server.server.responder.maker !== replaced)
        let stopping = Task { try? await server.stop() }

        // Then the replaced plan's run is cancelled, so the server stops, with that run ended,
        // long before the origin would answer
        let stopped = Locked(false)
        Task {
            await stopping.value
            stopped.withLock { $0 = true }
        }
        try await waitUntil("the server stops while a replaced plan's run waits", within: .seconds(120)) { stopped.withLock { $0 } }
        #expect(server.server.stoppedPastDrainTimeout)
        #expect(await replaced.isIdle, "the run of the plan the reload replaced is still going")
        #expect(await inFlight.value?.status != 200)
    }

    @Test func stoppingPastTheDrainTimeoutStopsTheLibvipsWorkOnTheLanes() async throws {
        // Given a request whose run enlarges a photo to 12000 px and blurs it: libvips work of
        // many minutes, in many small pieces, under the default limits.itemTimeout of 5 minutes
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 600, height: 600)), to: "in/photo.jpg")
        let steps = #"[{"resize": {"width": 12000}}, {"blur": {"sigma": 300}}]"#
        let output = #"{"name": "slow", "steps": \#(steps), "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        let server = try await RunningServer(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]), in: directory, drainTimeout: .seconds(1))
        let inFlight = Task { try? await server.request("/slow/photo.jpg", timeout: 600) }
        try await waitUntil("the steps take their lane") { server.maker.stages.counts[.process]?.running == 1 }

        // When the server stops
        let stopped = Locked(false)
        Task {
            try? await server.stop()
            stopped.withLock { $0 = true }
        }

        // Then, past the drain timeout, the blur is stopped inside libvips rather than left to
        // finish: the server stops long before it would, with no file of it on disk
        try await waitUntil("the server stops while the blur would still go", within: .seconds(120)) { stopped.withLock { $0 } }
        #expect(server.server.stoppedPastDrainTimeout)
        #expect(server.server.requestsCutOff == 1)
        #expect(await server.maker.isIdle)
        #expect(await inFlight.value?.status != 200)
        #expect(server.maker.stages.counts[.process]?.running == 0)
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") }, "\(directory.allFiles())")
    }

    @Test func aRequestWaitingPastTheDrainTimeoutIsCutOffWhileItsRunFinishesWhatIsOnALane() async throws {
        // Given a request whose run is in a step that nothing can interrupt (as an encode is),
        // held until the test lets it go
        let (server, directory, release) = try await RunningServer.holdingItsRun(drainTimeout: .seconds(1))
        // How the request ended: the server closing its connection, or the client giving up
        // (a timeout is no cut-off)
        let inFlight = Task { () -> String in
            do {
                return "answered \(try await server.request("/held/photo.jpg", timeout: 300).status)"
            } catch {
                return "\(error)"
            }
        }
        try await waitUntil("the run takes its lane") { server.maker.counts.going == 1 }

        // When the server stops
        let stopped = Locked(false)
        Task {
            try? await server.stop()
            stopped.withLock { $0 = true }
        }

        // Then, past the drain timeout, the request is cut off while the step still holds the run
        let ending = await inFlight.value
        #expect(ending.hasPrefix("no complete header in 0 bytes"), "\(ending)")
        #expect(!stopped.withLock { $0 })
        // and the server stops once the run has finished, with its file whole
        try Data().write(to: URL(fileURLWithPath: release))
        try await waitUntil("the server stops once the run ends") { stopped.withLock { $0 } }
        #expect(server.server.stoppedPastDrainTimeout)
        #expect(server.server.requestsCutOff == 1)
        #expect(await server.maker.isIdle)
        let written = (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")) ?? []
        #expect(written.allSatisfy { !$0.hasPrefix(".") }, "\(written)")
    }

    @Test func anAnswerWrittenWhileTheServerDrainsSaysTheConnectionEnds() async throws {
        // Given a keep-alive request whose run holds its step
        let (server, directory, release) = try await RunningServer.holdingItsRun(drainTimeout: .seconds(600))
        let port = server.port
        let request = Array("GET /held/photo.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        let answer = Task {
            try await LoopbackHTTPClient.onThread { try LoopbackHTTPClient.exchange(port: port, bytes: request, timeout: 600) }
        }
        try await waitUntil("the run holds its lane", within: .seconds(120)) { server.maker.counts.going == 1 }
        // When the server stops, and takes no new connection, before the run ends
        let stopping = Task { try await server.stop() }
        try await waitUntil("the server takes no new connection", within: .seconds(120)) {
            (try? await LoopbackHTTPClient.request(port: port, target: "/healthz", timeout: 5)) == nil
        }
        try Data().write(to: URL(fileURLWithPath: release))
        // Then the answer is whole and says the connection ends, which it then does
        let answered = try LoopbackHTTPClient.parse(try await answer.value)
        #expect(answered.status == 200 && !answered.body.isEmpty)
        #expect(answered.header("Connection") == "close")
        try await stopping.value
        #expect(directory.allFiles().contains("out/photo.webp"))
    }
}
#endif
