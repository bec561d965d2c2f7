#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `PipelineServer` under load and change: a full queue, a reload, its metrics.
@Suite(.serialized) struct ServeQueueAndReloadTests {
    /// A server with one lane and room for one more in its queue, over the local inputs and a
    /// remote photo (at `held` in the body) whose origin holds its answer until `release`.
    func withOneLaneAndAHeldOrigin(
        outputs: [String] = [ServeTests.thumb],
        _ body: (RunningServer, _ held: String, _ origin: TestHTTPServer, _ release: DispatchSemaphore) async throws -> Void
    )
        async throws
    {
        let directory = try ServeTests.folder()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        let release = DispatchSemaphore(value: 0)
        let origin = try TestHTTPServer { _, _ in
            _ = release.wait(timeout: .now() + 600)
            return .init(body: photo)
        }
        defer {
            release.signal()
            origin.stop()
        }
        // The held transfer may last as long as the test takes to release it (minutes, in a
        // sanitized suite on a loaded machine): a transfer timed out would be tried again, and
        // the release would wake the abandoned one.
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg"), "in/**/*.jpg"], outputs: outputs,
            extra: #""inFlight": 1, "fetch": {"timeout": "15m"}, "serve": {"maxQueue": 1}"#)
        try await withServer(json, in: directory) { server in
            try await body(server, "127.0.0.1_\(origin.port)/photo.jpg", origin, release)
        }
    }

    /// The remote input's run on the lane, held by its origin, and a local input's run waiting
    /// for it in the queue: the requests of both, once both are there.
    func takeTheLaneAndTheQueue(_ server: RunningServer, _ remote: String, _ origin: TestHTTPServer) async throws -> (
        held: Task<LoopbackHTTPClient.Response, any Error>, queued: Task<LoopbackHTTPClient.Response, any Error>
    ) {
        let held = Task.detached { try await server.request("/thumb/\(remote)", timeout: 900) }
        try await waitUntil("the server fetches the held input") { !origin.requests(for: "/photo.jpg").isEmpty }
        let queued = Task.detached { try await server.request("/thumb/a.jpg", timeout: 900) }
        try await waitUntil("the second input waits") { server.maker.counts.waiting == 1 }
        return (held, queued)
    }

    @Test func aFullQueueIsAnswered503WithRetryAfter() async throws {
        // Given one lane, room for one input in the queue, and the lane held by an input whose
        // origin holds its answer until the test releases it
        try await withOneLaneAndAHeldOrigin { server, remote, origin, release in
            let (held, queued) = try await takeTheLaneAndTheQueue(server, remote, origin)

            // When a third input is asked for, it is refused for now
            let refused = try await server.request("/thumb/sub/b.jpg")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            let body = try JSONSerialization.jsonObject(with: refused.body) as? [String: String]
            #expect(body?["error"]?.isEmpty == false)

            // Then, once the lane is free, all are answered
            release.signal()
            #expect(try await held.value.status == 200)
            #expect(try await queued.value.status == 200)
            #expect(try await server.request("/thumb/sub/b.jpg").status == 200)
        }
    }

    /// A run for another file of an input whose run goes waits for that run, in the queue: it
    /// takes a place there, and the gauge of waiting runs counts it.
    @Test func aRunWaitingForItsInputsRunIsInTheQueue() async throws {
        let tiny =
            #"{"name": "tiny", "steps": [{"resize": {"width": 8}}], "encode": {"format": "webp"}, "#
            + #""path": "out/{dir}/{stem}-tiny.webp"}"#
        try await withOneLaneAndAHeldOrigin(outputs: [ServeTests.thumb, tiny]) { server, remote, origin, release in
            // Given the held input's run on the lane
            let held = Task.detached { try await server.request("/thumb/\(remote)", timeout: 900) }
            try await waitUntil("the server fetches the held input") { !origin.requests(for: "/photo.jpg").isEmpty }

            // When another of its files is asked for, its run waits for the one going
            let other = Task.detached { try await server.request("/tiny/\(remote)", timeout: 900) }
            try await waitUntil("the other file's run waits") { server.maker.counts.waiting == 1 }

            // Then it fills the queue, the metrics say one run waits, and all are answered once the lane is free
            #expect(try await server.request("/thumb/a.jpg").status == 503)
            let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"pipeline_serve_runs{state="waiting"} 1"#), "\(metrics)")
            // (the origin is asked again by the second run, which its answer alone lets go)
            release.signal()
            release.signal()
            #expect(try await held.value.status == 200)
            #expect(try await other.value.status == 200)
        }
    }

    @Test func infoReadsWaitInTheQueueAndAreRefusedPastIt() async throws {
        // Given one lane, room for one more in the queue, and the lane held by an info read of
        // an input whose origin holds its answer until the test releases it
        try await withOneLaneAndAHeldOrigin { server, remote, origin, release in
            let held = Task.detached { try await server.request("/info/\(remote)", timeout: 900) }
            try await waitUntil("the server fetches the held input") { !origin.requests(for: "/photo.jpg").isEmpty }
            #expect(server.maker.counts.going == 1)
            let queued = Task.detached { try await server.request("/info/a.jpg", timeout: 900) }
            try await waitUntil("the second read waits") { server.maker.counts.waiting == 1 }

            // When a run is asked for, and another read, each is refused for now
            for path in ["/thumb/sub/b.jpg", "/info/sub/b.jpg"] {
                let refused = try await server.request(path)
                #expect(refused.status == 503, "\(path)")
                #expect(refused.header("Retry-After") == "1")
            }

            // Then, once the lane is free, all are answered, and counted under the info route
            release.signal()
            #expect(try await held.value.status == 200)
            #expect(try await queued.value.status == 200)
            #expect(try await server.request("/thumb/sub/b.jpg").status == 200)
            let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="info",status="200"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="info",status="503"} 1"#), "\(metrics)")
            #expect(await server.maker.isIdle)
        }
    }

    @Test func aReloadKeepsTheQueueFullOfTheOldPlansRuns() async throws {
        // Given one lane, room for one more in the queue, both taken by runs of the plan
        try await withOneLaneAndAHeldOrigin { server, remote, origin, release in
            let (held, queued) = try await takeTheLaneAndTheQueue(server, remote, origin)
            // When the server reloads, and a third input is asked for
            try server.server.reload(server.server.responder.maker.pipeline)
            #expect(server.server.responder.maker !== server.maker)
            // (bounded: admitted, it would wait for the held lane until the test ends)
            let refused = try await server.request("/thumb/sub/b.jpg", timeout: 120)
            // Then the new plan's run is refused for now, as the old plan's would have been
            #expect(refused.status == 503 && refused.header("Retry-After") == "1")

            release.signal()
            #expect(try await held.value.status == 200)
            #expect(try await queued.value.status == 200)
            #expect(try await server.request("/thumb/sub/b.jpg").status == 200)
        }
    }

    @Test func anInfoAnswerThatNeedsNoDecodeTakesNoLane() async throws {
        // Given one lane, room for one more in the queue, and a local input's info answered once
        try await withOneLaneAndAHeldOrigin { server, remote, origin, release in
            let first = try await server.request("/info/sub/b.jpg")
            let tag = try #require(first.header("ETag"))
            // and the lane and the queue then taken
            let (held, queued) = try await takeTheLaneAndTheQueue(server, remote, origin)

            // When the same info is asked for again, and by a client whose copy is current
            let again = try await server.request("/info/sub/b.jpg")
            let unchanged = try await server.request("/info/sub/b.jpg", headers: ["If-None-Match": tag])
            // Then both are answered at once, where an info that needs a decode is refused for now
            #expect(again.status == 200 && again.body == first.body && again.header("ETag") == tag)
            #expect(unchanged.status == 304)
            #expect(try await server.request("/info/a.jpg").status == 503)

            release.signal()
            #expect(try await held.value.status == 200)
            #expect(try await queued.value.status == 200)
        }
    }

    @Test func aReloadAnswersFromTheNewPlanAndAFailedOneKeepsTheOld() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { running in
            // An input added after the start is not planned, so not answered
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/c.jpg")
            #expect(try await running.request("/thumb/c.jpg").status == 404)
            // until the server reloads
            try running.server.reload(try RunningServer.pipeline(ServeTests.json, in: directory))
            let made = try await running.request("/thumb/c.jpg")
            #expect(made.status == 200, "\(String(decoding: made.body, as: UTF8.self))")
            #expect(try VipsImage.open(data: made.body).width == 16)

            // A reload whose plan cannot be made throws, and the server answers as before
            let nothing = PipelineHarness.json(inputs: ["nowhere/*.jpg"], outputs: [ServeTests.thumb])
            #expect(throws: PipelineFileError.self) { try running.server.reload(try RunningServer.pipeline(nothing, in: directory)) }
            #expect(try await running.request("/thumb/c.jpg").status == 200)

            // The counts go on across the reload
            let metrics = String(decoding: try await running.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="thumb",status="404"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="thumb",status="200"} 2"#), "\(metrics)")
        }
    }

    @Test func aReloadWhileARunGoesLetsTheNewPlansRunsForItsSourceWaitForIt() async throws {
        // Given a photo with two outputs, one of which waits in a step until the test lets it go,
        // and a request for it, whose run is going
        let directory = try TemporaryDirectory()
        let (json, release) = try RunningServer.heldPipeline(
            in: directory, outputs: [#"{"name": "quick", "encode": {"format": "jpeg"}, "path": "out/{stem}-quick.jpg"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        let processors = RunningServer.heldProcessors
        try await withServer(json, in: directory, processors: processors) { server in
            let first = Task { try await server.request("/held/photo.jpg") }
            try await waitUntil("the run takes its lane") { server.maker.counts.going == 1 }

            // When the server reloads (as SIGHUP, or a change in the inputs' folder, does), and
            // the same file and the photo's other file are asked for
            try server.server.reload(try RunningServer.pipeline(json, in: directory, processors: processors))
            let replacing = server.server.responder.maker
            #expect(replacing !== server.maker)
            let again = Task { try await server.request("/held/photo.jpg") }
            let other = Task { try await server.request("/quick/photo.jpg") }
            try await waitUntil("both requests have their jobs") { await replacing.jobCount == 2 }
            #expect(await replacing.runsStarted == 0, "a run of the new plan went beside the old plan's for one source")
            #expect(FileManager.default.createFile(atPath: release, contents: nil))

            // Then the new plan's runs waited for the old one: the same file was made once (the
            // second request found it up to date), and the photo's manifest entry names both files
            let answers = [try await first.value, try await again.value, try await other.value]
            #expect(answers.map(\.status) == [200, 200, 200])
            #expect(answers.map { $0.header("X-Pipeline-Source") } == ["made", "disk", "made"])
            let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
            let outputs = try #require(manifest.inputs.first?.outputs)
            #expect(Set(outputs.keys) == ["held", "quick"], "\(outputs.keys)")
        }
    }

    @Test func metricsCountRequestsBytesAndWhereFilesCameFrom() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { server in
            let made = try await server.request("/thumb/a.jpg")
            let fromDisk = try await server.request("/thumb/a.jpg")
            #expect(made.header("X-Pipeline-Source") == "made")
            #expect(fromDisk.header("X-Pipeline-Source") == "disk")
            let missing = try await server.request("/thumb/missing.jpg")
            _ = try await server.request("/made-up/path")

            let metrics = try await server.request("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n").map(String.init)
            func value(_ series: String) -> Double? {
                lines.first { $0.hasPrefix(series + " ") }.flatMap { Double($0.dropFirst(series.count + 1)) }
            }
            #expect(value(#"pipeline_serve_requests_total{output="thumb",status="200"}"#) == 2, "\(lines)")
            #expect(value(#"pipeline_serve_requests_total{output="thumb",status="404"}"#) == 1)
            #expect(value(#"pipeline_serve_requests_total{output="none",status="404"}"#) == 1)
            #expect(value(#"pipeline_serve_files_total{output="thumb",source="made"}"#) == 1)
            #expect(value(#"pipeline_serve_files_total{output="thumb",source="disk"}"#) == 1)
            #expect(
                value(#"pipeline_serve_bytes_served_total{output="thumb"}"#)
                    == Double(made.body.count + fromDisk.body.count + missing.body.count))
            #expect(value(#"pipeline_serve_request_duration_seconds_count{output="thumb"}"#) == 3)
            #expect(value(#"pipeline_serve_requests_in_flight"#) == 0)  // the scrape itself left out
            #expect(value(#"pipeline_serve_runs{state="waiting"}"#) == 0)
        }
    }
}
#endif
