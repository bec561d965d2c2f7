#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// The warm path: a request for a file the last run over its input reported, with the input and
/// the file as that run left them, is answered without a run (and so without reading the
/// journal); anything changed goes to a run, which makes what is out of date again.
@Suite(.serialized) struct WarmPathTests {
    static let json = ServeTests.json

    /// Asks for `/thumb/a.jpg` twice: made by the first request's run, answered warm the second
    /// time. Returns the first answer.
    static func madeThenWarm(_ server: RunningServer) async throws -> LoopbackHTTPClient.Response {
        let made = try await server.request("/thumb/a.jpg")
        #expect(made.status == 200)
        #expect(made.header("X-Pipeline-Source") == "made")
        #expect(await server.maker.runsStarted == 1)
        let warm = try await server.request("/thumb/a.jpg")
        #expect(warm.status == 200)
        #expect(warm.header("X-Pipeline-Source") == "disk")
        #expect(warm.header("ETag") == made.header("ETag"))
        #expect(warm.body == made.body)
        #expect(await server.maker.runsStarted == 1, "the second request started a run")
        return made
    }

    @Test func aWarmRequestStartsNoRun() async throws {
        let directory = try ServeTests.folder()
        let path = directory.path + "/out/a.webp"
        try await withServer(Self.json, in: directory) { server in
            let made = try await Self.madeThenWarm(server)
            let madeAt = try ServeTests.modified(path)
            // When the same file is asked for again and again, in every way it can be
            for _ in 0..<3 { #expect(try await server.request("/thumb/a.jpg").status == 200) }
            let head = try await server.request("/thumb/a.jpg", method: "HEAD")
            let tag = try #require(made.header("ETag"))
            let notModified = try await server.request("/thumb/a.jpg", headers: ["If-None-Match": tag])
            // Then it is answered as a run would answer it, from the file, and no run starts
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(made.body.count))
            #expect(notModified.status == 304)
            #expect(await server.maker.runsStarted == 1)
            #expect(try ServeTests.modified(path) == madeAt)
            // And another input has a run of its own
            #expect(try await server.request("/thumb/sub/b.jpg").header("X-Pipeline-Source") == "made")
            #expect(await server.maker.runsStarted == 2)
            // And the metrics count the warm answers as files from disk
            let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"pipeline_serve_files_total{output="thumb",source="disk"} 6"#), "\(metrics)")
        }
    }

    @Test func aRequestsRunKeepsTheBatchRunsManifestEntries() async throws {
        // Given a batch run's manifest of both photos
        let directory = try ServeTests.folder()
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: [ServeTests.thumb], extra: #""manifest": {"path": "site/images.json"}"#)
        let (_, batch) = try await PipelineHarness.run(json, in: directory)
        #expect(batch.succeeded == 2)
        let manifestURL = directory.url.appendingPathComponent("site/images.json")
        #expect(try ImageManifest.read(from: manifestURL).inputs.map(\.source) == ["in/a.jpg", "in/sub/b.jpg"])
        // When one photo changes and a request makes it again
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 32)), to: "in/a.jpg")
        try await withServer(json, in: directory) { server in
            let made = try await server.request("/thumb/a.jpg")
            #expect(made.status == 200 && made.header("X-Pipeline-Source") == "made")
        }
        // Then the manifest still lists both, the one made again at its new size
        let after = try ImageManifest.read(from: manifestURL)
        #expect(after.inputs.map(\.source) == ["in/a.jpg", "in/sub/b.jpg"])
        #expect(after.inputs.first?.width == 64)
    }

    @Test func anInputTouchedOnDiskIsMadeAgainWithANewTag() async throws {
        let directory = try ServeTests.folder()
        let input = directory.path + "/in/a.jpg"
        try await withServer(Self.json, in: directory) { server in
            let made = try await Self.madeThenWarm(server)
            // When the input gets another modification time, with the same bytes and size
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 120)], ofItemAtPath: input)
            let again = try await server.request("/thumb/a.jpg")
            // Then a run makes its output again, with another tag
            #expect(again.status == 200)
            #expect(again.header("X-Pipeline-Source") == "made")
            #expect(again.header("ETag") != made.header("ETag"))
            #expect(await server.maker.runsStarted == 2)
            // And the next request is warm again, with the new tag
            let warm = try await server.request("/thumb/a.jpg")
            #expect(warm.header("X-Pipeline-Source") == "disk")
            #expect(warm.header("ETag") == again.header("ETag"))
            #expect(await server.maker.runsStarted == 2)
        }
    }

    @Test func anInputReplacedByAnotherImageIsMadeFromItsNewPixels() async throws {
        let directory = try ServeTests.folder()
        try await withServer(Self.json, in: directory) { server in
            let made = try await Self.madeThenWarm(server)
            // When the input is replaced by an image of another shape
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 64)), to: "in/a.jpg")
            let again = try await server.request("/thumb/a.jpg")
            // Then the answer is made from it
            #expect(again.header("X-Pipeline-Source") == "made")
            #expect(again.header("ETag") != made.header("ETag"))
            #expect(try VipsImage.open(data: again.body).height == 16)
            #expect(try VipsImage.open(data: made.body).height != 16)
        }
    }

    @Test func aDeletedOutputIsMadeAgain() async throws {
        let directory = try ServeTests.folder()
        let path = directory.path + "/out/a.webp"
        try await withServer(Self.json, in: directory) { server in
            let made = try await Self.madeThenWarm(server)
            // When the file is deleted
            try FileManager.default.removeItem(atPath: path)
            let again = try await server.request("/thumb/a.jpg")
            // Then a run makes it again, at its path
            #expect(again.status == 200)
            #expect(again.header("X-Pipeline-Source") == "made")
            #expect(again.body == made.body)
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(await server.maker.runsStarted == 2)
        }
    }

    @Test func anOutputReplacedOnDiskIsNotAnsweredFromMemory() async throws {
        let directory = try ServeTests.folder()
        let path = directory.path + "/out/a.webp"
        try await withServer(Self.json, in: directory) { server in
            let made = try await Self.madeThenWarm(server)
            // When something else writes over the file
            try Data("not the server's file".utf8).write(to: URL(fileURLWithPath: path))
            let again = try await server.request("/thumb/a.jpg")
            // Then the run finds it is not the file the journal recorded, and makes it again
            #expect(again.status == 200)
            #expect(again.header("X-Pipeline-Source") == "made")
            #expect(again.body == made.body)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == made.body)
            #expect(await server.maker.runsStarted == 2)
        }
    }

    @Test func withoutIncrementalRunsEveryRequestRuns() async throws {
        // Given a file that turns incremental runs off: every run makes its outputs again
        let json = PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [ServeTests.thumb], extra: #""incremental": false"#)
        let directory = try ServeTests.folder()
        try await withServer(json, in: directory) { server in
            // Then every request is answered by a run of its own
            for expected in 1...2 {
                let response = try await server.request("/thumb/a.jpg")
                #expect(response.status == 200)
                #expect(response.header("X-Pipeline-Source") == "made")
                #expect(await server.maker.runsStarted == expected)
            }
        }
    }
}
#endif
