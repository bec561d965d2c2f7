#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

@testable import PipelineServer

/// A request whose file takes longer than `serve.timeout` is refused as a passing state, while
/// its run goes on and leaves the file for a later request.
@Suite(.serialized) struct ServeTimeoutTests {
    /// A pipeline file of one input, `/photo.jpg` on `origin`, fetched in one attempt of at most
    /// `fetchTimeout`, whose requests wait a second.
    static func inputOn(_ origin: TestHTTPServer, fetchTimeout: String) -> String {
        PipelineHarness.json(
            inputs: [origin.url("/photo.jpg")], outputs: [ServeTests.thumb],
            extra: #""fetch": {"timeout": "\#(fetchTimeout)", "retries": 0}, "serve": {"timeout": 1}"#)
    }

    @Test func aRunPastTheTimeoutIs503WhileItGoesOnToMakeTheFileALaterRequestGets() async throws {
        // Given a server whose run is held in a step until the test lets it go, and a timeout of a second
        let (server, directory, release) = try await RunningServer.holdingItsRun(
            extra: #""serve": {"timeout": 1}"#, drainTimeout: .seconds(600))

        // When the file is asked for
        let refused = try await server.request("/held/photo.jpg")

        // Then the answer is 503, to be tried again, naming the setting, while the run still holds its lane
        #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.header("Retry-After") == "1")
        #expect(String(decoding: refused.body, as: UTF8.self).contains("not ready within serve.timeout (1s)"))
        try await waitUntil("the run holds its lane") { server.maker.counts.going == 1 }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/photo.webp"))

        // and once the step is let go, the run ends with the file, which the next request gets from disk
        try Data().write(to: URL(fileURLWithPath: release))
        try await waitUntil("the run ends") { await server.maker.isIdle }
        let answered = try await server.request("/held/photo.jpg")
        #expect(answered.status == 200, "\(String(decoding: answered.body, as: UTF8.self))")
        #expect(answered.header("X-Pipeline-Source") == "disk")
        #expect(answered.header("Content-Type") == "image/webp")
        try await server.stop()
        #expect(!server.server.stoppedPastDrainTimeout)
    }

    @Test func stoppingWaitsForARunNoRequestWaitsForAndCancelsItPastTheDrainTimeout() async throws {
        // Given a run that no request waits for any more (answered at the timeout), fetching its
        // input from an origin that does not answer while the test runs
        let silent = try SilentOrigin(seconds: 600)
        let origin = silent.server
        let directory = try TemporaryDirectory()
        let json = Self.inputOn(origin, fetchTimeout: "600s")
        let server = try await RunningServer(json, in: directory, drainTimeout: .seconds(1))
        let refused = try await server.request("/thumb/127.0.0.1_\(origin.port)/photo.jpg")
        #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))")
        try await waitUntil("the run holds its lane") { server.maker.counts.going == 1 }

        // When the server stops
        let stopped = Locked(false)
        Task {
            try? await server.stop()
            stopped.withLock { $0 = true }
        }

        // Then the run is cancelled past the drain timeout, so the server stops, with the run
        // ended, long before the origin would answer
        try await waitUntil("the server stops while a run no request waits for is going", within: .seconds(120)) {
            stopped.withLock { $0 }
        }
        #expect(server.server.stoppedPastDrainTimeout)
        #expect(server.server.requestsCutOff == 0, "the one request was answered at the timeout")
        #expect(await server.maker.isIdle)
    }

    @Test func anInfoReadPastTheTimeoutIs503() async throws {
        // Given an input on an origin that does not answer while the test runs, a fetch allowed
        // a few seconds, and requests one
        let silent = try SilentOrigin(seconds: 600)
        let origin = silent.server
        let directory = try TemporaryDirectory()
        let json = Self.inputOn(origin, fetchTimeout: "5s")

        // When its info is asked for
        try await withServer(json, in: directory) { server in
            let refused = try await server.request("/info/127.0.0.1_\(origin.port)/photo.jpg")

            // Then the answer is 503 at the timeout, to be tried again
            #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(refused.header("Retry-After") == "1")
            #expect(String(decoding: refused.body, as: UTF8.self).contains("not ready within serve.timeout (1s)"))
            try await waitUntil("the read ends", within: .seconds(120)) { await server.maker.isIdle }
        }
    }
}
#endif
