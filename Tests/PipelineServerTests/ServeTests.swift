#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `PipelineServer`: a real server on loopback, asked by a plain HTTP client, over real files.
@Suite(.serialized) struct ServeTests {
    static let thumb =
        #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{dir}/{stem}.webp"}"#
    static let json = PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [thumb])

    /// A folder with photos in `in/` (one in a subfolder) and the pipeline file's outputs in `out/`.
    static func folder() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        try directory.write(photo, to: "in/a.jpg")
        try directory.write(photo, to: "in/sub/b.jpg")
        try directory.write(Data(json.utf8), to: "p.json")
        return directory
    }

    static func modified(_ path: String) throws -> Date {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
    }

    /// The journal's lines: one per output written.
    static func journalLines(_ json: String, in directory: TemporaryDirectory) throws -> [Substring] {
        let definition = try PipelineHarness.pipeline(json, in: directory).definition
        let file = definition.cache.journalFile(pipeline: definition.name, baseDirectory: definition.baseDirectory)
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    @Test func makesAnOutputOnTheFirstRequestAndAnswersFromDiskAfter() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { server in
            // When an output no run has made is asked for
            let first = try await server.request("/thumb/a.jpg")
            // Then it is made at its path and answered with
            #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
            let path = directory.path + "/out/a.webp"
            let file = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(first.body == file)
            #expect(first.header("Content-Type") == "image/webp")
            #expect(first.header("Content-Length") == String(file.count))
            #expect(first.header("X-Pipeline-Source") == "made")
            #expect(first.header("X-Content-Type-Options") == "nosniff")
            let image = try VipsImage.open(data: first.body)
            #expect(image.width == 16)
            let tag = try #require(first.header("ETag"))
            #expect(tag.hasPrefix("\"") && !tag.hasPrefix("W/"))
            let madeAt = try Self.modified(path)

            // When it is asked for again, it comes from disk, untouched
            let second = try await server.request("/thumb/a.jpg")
            #expect(second.status == 200)
            #expect(second.header("X-Pipeline-Source") == "disk")
            #expect(second.header("ETag") == tag)
            #expect(second.body == file)
            #expect(try Self.modified(path) == madeAt)

            // HEAD answers with the headers alone
            let head = try await server.request("/thumb/a.jpg", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(file.count))
            #expect(head.body.isEmpty)

            // If-None-Match with the tag gets 304 and no body
            let notModified = try await server.request("/thumb/a.jpg", headers: ["If-None-Match": tag])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(try await server.request("/thumb/a.jpg", headers: ["If-None-Match": "\"other\""]).status == 200)

            // An input in a subfolder is named by {dir}/{name}
            let nested = try await server.request("/thumb/sub/b.jpg")
            #expect(nested.status == 200)
            #expect(FileManager.default.fileExists(atPath: directory.path + "/out/sub/b.webp"))

            // Every answer, a refusal's JSON and a disk file's too, forbids a browser to guess its type
            let missing = try await server.request("/thumb/none.jpg")
            #expect(missing.status == 404 && missing.header("X-Content-Type-Options") == "nosniff")
            #expect(second.header("X-Content-Type-Options") == "nosniff")
        }
    }

    @Test func anInputChangedOnDiskHasItsOutputsMadeAgain() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { server in
            let before = try await server.request("/thumb/a.jpg")
            #expect(before.header("X-Pipeline-Source") == "made")
            // When the input is replaced by another image (another size, so another version)
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 64)), to: "in/a.jpg")
            let after = try await server.request("/thumb/a.jpg")
            // Then its output is made again, with another tag, from the new pixels
            #expect(after.status == 200)
            #expect(after.header("X-Pipeline-Source") == "made")
            #expect(after.header("ETag") != before.header("ETag"))
            #expect(try VipsImage.open(data: after.body).height == 16)
            #expect(try VipsImage.open(data: before.body).height != 16)
            // And an If-None-Match with the old tag no longer gets 304
            let stale = try await server.request("/thumb/a.jpg", headers: ["If-None-Match": before.header("ETag") ?? ""])
            #expect(stale.status == 200)
        }
    }

    @Test func aBatchRunAndTheServerShareTheirFiles() async throws {
        // Given a batch run that made every output
        let directory = try Self.folder()
        let batch = try await PipelineHarness.run(Self.json, in: directory)
        #expect(batch.summary.outputsWritten == 2)
        let path = directory.path + "/out/a.webp"
        let madeAt = try Self.modified(path)
        try await withServer(Self.json, in: directory) { server in
            // Then the server answers from its file and makes nothing
            let response = try await server.request("/thumb/a.jpg")
            #expect(response.status == 200)
            #expect(response.header("X-Pipeline-Source") == "disk")
            #expect(try Self.modified(path) == madeAt)
        }
        #expect(try Self.journalLines(Self.json, in: directory).count == 2)
    }

    @Test func aBatchRunFindsWhatTheServerMadeUpToDate() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { server in
            let response = try await server.request("/thumb/a.jpg")
            #expect(response.header("X-Pipeline-Source") == "made")
        }
        let madeAt = try Self.modified(directory.path + "/out/a.webp")
        // When a batch run follows, it makes only the output the server did not
        let batch = try await PipelineHarness.run(Self.json, in: directory)
        #expect(batch.summary.outputsUpToDate == 1)
        #expect(batch.summary.outputsWritten == 1)
        #expect(try Self.modified(directory.path + "/out/a.webp") == madeAt)
    }

    @Test func concurrentRequestsForOneOutputMakeItOnce() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { server in
            let responses = try await withThrowingTaskGroup(of: LoopbackHTTPClient.Response.self) { group in
                for _ in 0..<4 { group.addTask { try await server.request("/thumb/a.jpg") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.allSatisfy { $0.status == 200 })
            #expect(Set(responses.map { $0.header("ETag") ?? "" }).count == 1)
        }
        // One job: the output was written, and recorded, once.
        #expect(try Self.journalLines(Self.json, in: directory).count == 1)
    }
}
#endif
