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

    @Test func pathsThatNameNoPlannedInputAreNotFound() async throws {
        let directory = try Self.folder()
        try directory.write(Data("secret".utf8), to: "in/secret.txt")
        let attempts = [
            "/thumb/../p.json", "/thumb/%2e%2e/p.json", "/thumb/%2E%2E%2Fp.json", "/thumb/%252e%252e%252fp.json",
            "/thumb/a.jpg%00", "/thumb/a.jpg%00.png", "/thumb/sub/../a.jpg", "/thumb/./a.jpg", "/thumb//etc/passwd",
            "/thumb/%2Fetc%2Fpasswd", "/%2e%2e/a.jpg", "/../thumb/a.jpg", "/thumb/secret.txt", "/thumb/in/a.jpg",
            "/thumb/A.JPG", "/thumb/a.jpg/", "/thumb", "/", "/nothing/a.jpg", "/thumb/%zz",
        ]
        try await withServer(Self.json, in: directory) { server in
            for target in attempts {
                let response = try await server.request(target)
                #expect(response.status == 404, "\(target): \(response.status)")
                #expect(response.header("Content-Type") == "application/json", "\(target)")
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                #expect(body?["error"] != nil, "\(target)")
            }
        }
        // Nothing was made for any of them.
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func widthsAndFormatsFollowTheQueryAndAccept() async throws {
        let directory = try Self.folder()
        let photo =
            #"{"name": "photo", "widths": [16, 24], "formats": [{"format": "avif"}, {"format": "webp"}, {"format": "jpeg"}], "path": "out/{stem}-{width}.{format}"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [photo])
        try await withServer(json, in: directory) { server in
            // Accept, in the output's order: AVIF is not accepted, WebP is
            let webp = try await server.request("/photo/a.jpg?width=16", headers: ["Accept": "image/webp,image/*;q=0.8,image/avif;q=0"])
            #expect(webp.status == 200)
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(webp.header("Vary") == "Accept")
            #expect(try VipsImage.open(data: webp.body).width == 16)
            // A wildcard names no format: the last listed, the fallback
            let fallback = try await server.request("/photo/a.jpg?width=24", headers: ["Accept": "*/*"])
            #expect(fallback.header("Content-Type") == "image/jpeg")
            #expect(try await server.request("/photo/a.jpg", headers: ["Accept": "image/webp,*/*"]).header("Content-Type") == "image/webp")
            // Named: the one named
            let avif = try await server.request("/photo/a.jpg?width=24", headers: ["Accept": "image/avif,image/webp,*/*"])
            #expect(avif.header("Content-Type") == "image/avif")
            #expect(try VipsImage.open(data: avif.body).width == 24)
            // Nothing listed accepted: the last (an <img>'s fallback)
            #expect(try await server.request("/photo/a.jpg", headers: ["Accept": "text/html"]).header("Content-Type") == "image/jpeg")
            // ?format= forces one; without a width, the widest
            let forced = try await server.request("/photo/a.jpg?format=jpg", headers: ["Accept": "image/avif"])
            #expect(forced.header("Content-Type") == "image/jpeg")
            #expect(try VipsImage.open(data: forced.body).width == 24)
            // Different representations, different tags
            #expect(webp.header("ETag") != avif.header("ETag"))
            // A width or format the output does not list is a bad request
            for target in ["/photo/a.jpg?width=17", "/photo/a.jpg?width=abc", "/photo/a.jpg?format=gif", "/photo/a.jpg?width="] {
                let response = try await server.request(target)
                #expect(response.status == 400, "\(target)")
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                #expect(body?["error"]?.isEmpty == false, "\(target)")
            }
        }
    }

    @Test func inputsRefusedByTheirLimitsAreClientErrors() async throws {
        let directory = try Self.folder()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 300, height: 300)), to: "in/large.jpg")
        try directory.write(Data("not an image at all".utf8), to: "in/broken.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""fetch": {"maxBytes": "20KB"}"#)
        try await withServer(json, in: directory) { server in
            let large = try await server.request("/thumb/large.jpg")
            #expect(large.status == 413, "\(String(decoding: large.body, as: UTF8.self))")
            let broken = try await server.request("/thumb/broken.jpg")
            #expect(broken.status == 422, "\(String(decoding: broken.body, as: UTF8.self))")
            for response in [large, broken] {
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                #expect(body?["error"]?.isEmpty == false)
            }
            // The others are still answered
            #expect(try await server.request("/thumb/a.jpg").status == 200)
        }
    }

    @Test func theServeSectionSetsCacheControl() async throws {
        let directory = try Self.folder()
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [Self.thumb],
            extra: #""serve": {"cacheControl": "public, max-age=60", "maxConnections": 8}"#)
        #expect(
            try PipelineHarness.pipeline(json, in: directory).definition.serve
                == ServeSettings(cacheControl: "public, max-age=60", maxConnections: 8))
        try await withServer(json, in: directory) { server in
            let response = try await server.request("/thumb/a.jpg")
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "public, max-age=60")
        }
        // Without the section: no Cache-Control
        try await withServer(Self.json, in: directory) { server in
            let response = try await server.request("/thumb/a.jpg")
            #expect(response.header("Cache-Control") == nil)
        }
    }

    @Test func aBadServeSectionIsAnErrorNamingItsPath() throws {
        let directory = try Self.folder()
        for (serve, path) in [
            (#"{"maxConnections": 0}"#, "serve.maxConnections"), (#"{"cacheControl": ""}"#, "serve.cacheControl"),
            (#"{"sign": true}"#, "serve.sign"),
        ] {
            let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""serve": "# + serve)
            let error = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory) }
            #expect(error?.problems.contains { $0.path == path } == true, "\(String(describing: error))")
        }
    }

    @Test func aFullQueueIsAnswered503WithRetryAfter() async throws {
        // Given one lane, room for one input in the queue, and the lane held by an input whose
        // origin holds its answer until the test releases it
        let directory = try Self.folder()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        let release = DispatchSemaphore(value: 0)
        let origin = try TestHTTPServer { _, _ in
            _ = release.wait(timeout: .now() + 120)
            return .init(body: photo)
        }
        defer {
            release.signal()
            origin.stop()
        }
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg"), "in/**/*.jpg"], outputs: [Self.thumb],
            extra: #""inFlight": 1, "serve": {"maxQueue": 1}"#)
        try await withServer(json, in: directory) { server in
            let held = Task.detached { try await server.request("/thumb/127.0.0.1_\(origin.port)/photo.jpg") }
            for _ in 0..<6000 where origin.requests(for: "/photo.jpg").isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            try #require(!origin.requests(for: "/photo.jpg").isEmpty)
            let queued = Task.detached { try await server.request("/thumb/a.jpg") }
            for _ in 0..<6000 where await server.maker.counts.waiting == 0 { try await Task.sleep(for: .milliseconds(20)) }
            try #require(await server.maker.counts.waiting == 1)

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

    @Test func aReloadAnswersFromTheNewPlanAndAFailedOneKeepsTheOld() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { running in
            // An input added after the start is not planned, so not answered
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/c.jpg")
            #expect(try await running.request("/thumb/c.jpg").status == 404)
            // until the server reloads
            try running.server.reload(try PipelineHarness.pipeline(Self.json, in: directory))
            let made = try await running.request("/thumb/c.jpg")
            #expect(made.status == 200, "\(String(decoding: made.body, as: UTF8.self))")
            #expect(try VipsImage.open(data: made.body).width == 16)

            // A reload whose plan cannot be made throws, and the server answers as before
            let nothing = PipelineHarness.json(inputs: ["nowhere/*.jpg"], outputs: [Self.thumb])
            #expect(throws: PipelineFileError.self) { try running.server.reload(try PipelineHarness.pipeline(nothing, in: directory)) }
            #expect(try await running.request("/thumb/c.jpg").status == 200)

            // The counts go on across the reload
            let metrics = String(decoding: try await running.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="thumb",status="404"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="thumb",status="200"} 2"#), "\(metrics)")
        }
    }

    @Test func metricsCountRequestsBytesAndWhereFilesCameFrom() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { server in
            let made = try await server.request("/thumb/a.jpg")
            let fromDisk = try await server.request("/thumb/a.jpg")
            #expect(made.header("X-Pipeline-Source") == "made")
            #expect(fromDisk.header("X-Pipeline-Source") == "disk")
            _ = try await server.request("/thumb/missing.jpg")
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
            #expect(value(#"pipeline_serve_bytes_served_total{output="thumb"}"#) == Double(made.body.count + fromDisk.body.count))
            #expect(value(#"pipeline_serve_request_duration_seconds_count{output="thumb"}"#) == 3)
            #expect(value(#"pipeline_serve_requests_in_flight"#) == 1)  // the /metrics request itself
            #expect(value(#"pipeline_serve_runs{state="waiting"}"#) == 0)
        }
    }

    @Test func signaturesAreImgproxys() throws {
        // imgproxy's own documented example: key "secret", salt "hello", in hex
        let signing = try #require(
            ServeSettings.Signing.bytes(hex: "736563726574").flatMap { key in
                ServeSettings.Signing.bytes(hex: "68656C6C6F").map { ServeSettings.Signing(key: key, salt: $0) }
            })
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        let signature = URLSignature(signing)
        #expect(signature.signature(of: path) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(signature.verified("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" + path) == path)
        #expect(signature.verified("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9" + path) == nil)
        #expect(signature.verified("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8=" + path) == nil)
        #expect(signature.verified(path) == nil)
        #expect(ServeSettings.Signing.bytes(hex: "0g") == nil)
        #expect(ServeSettings.Signing.bytes(hex: "abc") == nil)
        #expect(ServeSettings.Signing.bytes(hex: "0aFf") == [0x0A, 0xFF])
    }

    @Test func aFileWithAKeyAnswersOnlySignedPaths() async throws {
        let directory = try Self.folder()
        // Signatures computed apart from this code (Python's hmac) for this key and salt.
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: [Self.thumb],
            extra: #""serve": {"key": "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", "#
                + #""salt": "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"}"#)
        let signedA = "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/a.jpg"
        let signedB = "/k-beSUVKoYfW9yX3TuuinxIV22Rx7SKCpxFDX88MQto/thumb/sub/b.jpg"
        try await withServer(json, in: directory) { server in
            #expect(try await server.request(signedA).status == 200)
            #expect(try await server.request(signedB + "?format=webp").status == 200)
            let refused = [
                "/thumb/a.jpg", "/k-beSUVKoYfW9yX3TuuinxIV22Rx7SKCpxFDX88MQto/thumb/a.jpg",
                "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/sub/b.jpg",
                "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0=/thumb/a.jpg", "/%%%/thumb/a.jpg", "/insecure/thumb/a.jpg",
                "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/../a.jpg",
            ]
            for target in refused {
                let response = try await server.request(target)
                #expect(response.status == 403, "\(target)")
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                #expect(body?["error"]?.isEmpty == false, "\(target)")
            }
            #expect(try await server.request("/healthz").status == 200)
        }
    }

    @Test func aKeyNeedsASaltAndBothAreHex() throws {
        let directory = try Self.folder()
        let cases = [
            (#"{"key": "00ff"}"#, "serve.salt"), (#"{"salt": "00ff"}"#, "serve.key"),
            (#"{"key": "secret", "salt": "00ff"}"#, "serve.key"), (#"{"key": "00ff", "salt": "abc"}"#, "serve.salt"),
        ]
        for (serve, path) in cases {
            let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""serve": "# + serve)
            let error = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory) }
            #expect(error?.problems.contains { $0.path == path } == true, "\(serve): \(String(describing: error))")
        }
    }

    @Test func aStalledClientIsCutOffAndOversizedRequestsAreRefused() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory, settings: .init(port: 0, idleTimeout: .seconds(1))) { server in
            let port = server.port
            // A client that sends half a request and then nothing is disconnected (the client's
            // own bound is far longer: were it not cut off, `exchange` would fail)
            let stalled = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.exchange(port: port, bytes: Array("GET /thumb/a.jpg HTTP/1.1\r\nHost: x\r\n".utf8), timeout: 60)
            }
            #expect(!String(decoding: stalled, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            // A URL or headers past the limits get a client error or a closed connection, never a 5xx
            let long = "/thumb/" + String(repeating: "a", count: 40_000)
            let longHeader = ["Cookie": String(repeating: "c", count: 40_000)]
            for (target, headers) in [(long, [String: String]()), ("/thumb/a.jpg", longHeader)] {
                let answer = try await LoopbackHTTPClient.onThread {
                    try? LoopbackHTTPClient.send(port: port, target: target, headers: headers, timeout: 60)
                }
                #expect((answer?.status ?? 400) < 500, "\(answer?.status ?? 0)")
            }
            // A URL just past its limit is answered 414; one just under it is looked up (and not found)
            let limit = PipelineServer.maxTargetBytes
            let over = try await server.request("/thumb/" + String(repeating: "b", count: limit - 6))
            #expect(over.status == 414, "\(over.status)")
            #expect(String(decoding: over.body, as: UTF8.self).contains("longer than"))
            #expect(try await server.request("/thumb/" + String(repeating: "b", count: limit - 7)).status == 404)
            // And the server goes on answering
            #expect(try await server.request("/healthz").status == 200)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func outputsThatAreNotOneLocalFileAreNotServed() async throws {
        let directory = try Self.folder()
        let s3 = #"{"name": "remote", "encode": {"format": "webp"}, "path": "s3://bucket/thumbs/{stem}.webp"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb, s3])
        try await withServer(json, in: directory) { server in
            // Refused from the catalog: nothing runs, so nothing reaches for a bucket
            let response = try await server.request("/remote/a.jpg")
            #expect(response.status == 404)
            let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
            #expect(body?["error"]?.isEmpty == false)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func healthzAndMethods() async throws {
        let directory = try Self.folder()
        try await withServer(Self.json, in: directory) { server in
            let health = try await server.request("/healthz")
            #expect(health.status == 200)
            #expect(String(decoding: health.body, as: UTF8.self) == "ok\n")
            let post = try await server.request("/thumb/a.jpg", method: "DELETE")
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }
}
#endif
