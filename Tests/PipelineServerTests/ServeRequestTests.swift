#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// What a request to `PipelineServer` is answered with: not found, the width and format asked for, limits, Cache-Control.
@Suite(.serialized) struct ServeRequestTests {
    @Test func pathsThatNameNoPlannedInputAreNotFound() async throws {
        let directory = try ServeTests.folder()
        try directory.write(Data("secret".utf8), to: "in/secret.txt")
        let attempts = [
            "/thumb/../p.json", "/thumb/%2e%2e/p.json", "/thumb/%2E%2E%2Fp.json", "/thumb/%252e%252e%252fp.json",
            "/thumb/a.jpg%00", "/thumb/a.jpg%00.png", "/thumb/sub/../a.jpg", "/thumb/./a.jpg", "/thumb//etc/passwd",
            "/thumb/%2Fetc%2Fpasswd", "/%2e%2e/a.jpg", "/../thumb/a.jpg", "/thumb/secret.txt", "/thumb/in/a.jpg",
            "/thumb/A.JPG", "/thumb/a.jpg/", "/thumb", "/", "/nothing/a.jpg", "/thumb/%zz",
        ]
        try await withServer(ServeTests.json, in: directory) { server in
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

    /// The path is decoded once: an input below a folder is named with `/` or with `%2F` alike.
    @Test func anEncodedSlashNamesTheInputBelowAFolder() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/2024/dune.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"],
            outputs: [
                #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{dir}/{stem}.png"}"#
            ])
        try await withServer(json, in: directory) { server in
            let plain = try await server.request("/thumb/2024/dune.jpg")
            #expect(plain.status == 200)
            for spelled in ["/thumb/2024%2Fdune.jpg", "/thumb/2024%2fdune.jpg"] {
                let encoded = try await server.request(spelled)
                #expect(encoded.status == 200, "\(spelled)")
                #expect(encoded.header("ETag") == plain.header("ETag"), "\(spelled)")
            }
        }
    }

    @Test func namesSpelledComposedAndDecomposedAnswerTheirOwnFiles() async throws {
        // Given two files whose names differ only in how é is spelled: composed (U+00E9) and
        // decomposed (e, U+0301), two files on Linux, though Swift's strings take them as one
        let directory = try TemporaryDirectory()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/\(composed).jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 40)), to: "in/\(decomposed).jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#])
        try await withServer(json, in: directory) { server in
            // When each is asked for by its URL, twice (made, then from the disk or memory)
            for (name, height) in [(composed, 11), (decomposed, 16), (composed, 11), (decomposed, 16)] {
                let encoded = try #require(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let answer = try await server.request("/thumb/\(encoded).jpg")
                // Then each answers its own file, and its own /info
                #expect(answer.status == 200)
                #expect(try VipsImage.open(data: answer.body).size == ImageSize(width: 16, height: height), "\(name.unicodeScalars.count)")
                let info = try await server.request("/info/\(encoded).jpg")
                #expect(String(decoding: info.body, as: UTF8.self).contains(#""height":\#(height == 11 ? 32 : 40)"#))
            }
            #expect(Set(directory.allFiles().filter { $0.hasPrefix("out/") }.map { Array($0.utf8) }).count == 2)
        }
    }

    @Test func widthsAndFormatsFollowTheQueryAndAccept() async throws {
        let directory = try ServeTests.folder()
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
            // A parameter's name percent-encoded is the same parameter
            let encoded = try await server.request("/photo/a.jpg?%77idth=16&form%61t=webp")
            #expect(encoded.header("Content-Type") == "image/webp")
            #expect(try VipsImage.open(data: encoded.body).width == 16)
            #expect(try await server.request("/photo/a.jpg?width=16&%77idth=24").status == 400)
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
        let directory = try ServeTests.folder()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 300, height: 300)), to: "in/large.jpg")
        try directory.write(Data("not an image at all".utf8), to: "in/broken.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [ServeTests.thumb], extra: #""fetch": {"maxBytes": "20KB"}"#)
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

    @Test func anOutputWhoseNameWouldBeTooLongIsRefusedAloneAndTheInputsOthersAnswered() async throws {
        // Given an input whose name fills 251 bytes, an output that adds 6 to it and one that keeps it
        let directory = try ServeTests.folder()
        let long = PipelineHarness.longStem
        let json = try PipelineHarness.longNamedInput(in: directory, beside: [ServeTests.thumb])
        try await withServer(json, in: directory) { server in
            // The output that can be named is answered
            #expect(try await server.request("/thumb/\(long).jpg").status == 200)
            // The other is refused with the reason, naming the input as the URL did, not where it is
            let refused = try await server.request("/long/\(long).jpg")
            let body = String(decoding: refused.body, as: UTF8.self)
            #expect(refused.status == 422, "\(body)")
            #expect(body.contains("would be 257 bytes long") && !body.contains(directory.path), "\(body)")
        }
    }

    @Test func theServeSectionSetsCacheControl() async throws {
        let directory = try ServeTests.folder()
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [ServeTests.thumb],
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
        try await withServer(ServeTests.json, in: directory) { server in
            let response = try await server.request("/thumb/a.jpg")
            #expect(response.header("Cache-Control") == nil)
        }
    }

    @Test func aBadServeSectionIsAnErrorNamingItsPath() throws {
        let directory = try ServeTests.folder()
        for (serve, path) in [
            (#"{"maxConnections": 0}"#, "serve.maxConnections"), (#"{"cacheControl": ""}"#, "serve.cacheControl"),
            (#"{"sign": true}"#, "serve.sign"), (#"{"timeout": 0}"#, "serve.timeout"), (#"{"timeout": "0ms"}"#, "serve.timeout"),
            (#"{"drainTimeout": "2h"}"#, "serve.drainTimeout"), (#"{"drainTimeout": "soon"}"#, "serve.drainTimeout"),
        ] {
            let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [ServeTests.thumb], extra: #""serve": "# + serve)
            let error = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory) }
            #expect(error?.problems.contains { $0.path == path } == true, "\(String(describing: error))")
        }
    }

    /// The timeouts are durations, as `fetch.timeout` is, or a number of seconds.
    @Test func theServeTimeoutsAreDurations() throws {
        let directory = try ServeTests.folder()
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [ServeTests.thumb], extra: #""serve": {"timeout": "1500ms", "drainTimeout": 0}"#)
        let serve = try PipelineHarness.pipeline(json, in: directory).definition.serve
        #expect(serve.timeout == 1.5 && serve.drainTimeout == 0)
        let minutes = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [ServeTests.thumb], extra: #""serve": {"timeout": 90, "drainTimeout": "1h"}"#)
        let longer = try PipelineHarness.pipeline(minutes, in: directory).definition.serve
        #expect(longer.timeout == 90 && longer.drainTimeout == 3600)
    }
}
#endif
