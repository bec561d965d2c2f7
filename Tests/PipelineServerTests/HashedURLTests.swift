#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// Outputs named by `{hash}`: a URL that names the file's hash is answered `immutable`, one that
/// does not says which does (`Content-Location`), and a hash the bytes no longer have is gone.
@Suite struct HashedURLTests {
    static let photo = #"{"name": "photo", "widths": [16, 32], "formats": ["avif", "webp"], "path": "out/{stem}-{width}.{hash}.{format}"}"#

    @Test func aURLThatNamesTheHashIsImmutableUntilTheBytesChange() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [Self.photo], extra: #""serve": {"cacheControl": "public, max-age=60"}"#)
        try await withServer(json, in: directory) { server in
            // A request without a hash gets the file, cached as the file says, and its hashed URL
            let plain = try await server.request("/photo/a.jpg?width=16", headers: ["Accept": "image/webp,*/*"])
            #expect(plain.status == 200)
            let hash = String(SHA256.hex(plain.body).prefix(10))
            #expect(plain.header("Cache-Control") == "public, max-age=60")
            #expect(plain.header("Content-Location") == "/photo/a.jpg?width=16&format=webp&hash=\(hash)")
            #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a-16.\(hash).webp"))
            // and a 304 to it names that URL too (RFC 9110, section 15.4.5)
            let unchanged = try await server.request(
                "/photo/a.jpg?width=16", headers: ["Accept": "image/webp,*/*", "If-None-Match": try #require(plain.header("ETag"))])
            #expect(unchanged.status == 304)
            #expect(unchanged.header("Content-Location") == plain.header("Content-Location"))

            // That URL gets the same bytes, immutable, whatever the browser accepts
            let hashed = try await server.request("/photo/a.jpg?width=16&format=webp&hash=\(hash)", headers: ["Accept": "image/avif"])
            #expect(hashed.status == 200)
            #expect(hashed.body == plain.body)
            #expect(hashed.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(hashed.header("Content-Location") == nil)

            // A hash of other bytes, or one that is not a hash, is refused
            let other = try await server.request("/photo/a.jpg?width=16&format=webp&hash=0123456789")
            #expect(other.status == 404)
            #expect(try await server.request("/photo/a.jpg?hash=XYZ").status == 400)
            #expect(try await server.request("/photo/a.jpg?hash=0123").status == 400)

            // A hash of other bytes is not made good by the tag of the file's bytes now
            let tag = try #require(hashed.header("ETag"))
            #expect(
                try await server.request("/photo/a.jpg?width=16&format=webp&hash=\(hash)", headers: ["If-None-Match": tag]).status == 304)
            #expect(
                try await server.request("/photo/a.jpg?width=16&format=webp&hash=0123456789", headers: ["If-None-Match": tag]).status == 404
            )

            // When the input changes, the old hash is gone and the file has a new one
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 40, height: 32)), to: "in/a.jpg")
            let gone = try await server.request("/photo/a.jpg?width=16&format=webp&hash=\(hash)")
            #expect(gone.status == 404)
            let changed = try await server.request("/photo/a.jpg?width=16&format=webp")
            let newHash = String(SHA256.hex(changed.body).prefix(10))
            #expect(newHash != hash)
            #expect(changed.header("Content-Location") == "/photo/a.jpg?width=16&format=webp&hash=\(newHash)")
            #expect(try await server.request("/photo/a.jpg?width=16&format=webp&hash=\(newHash)").status == 200)
            // and the file of the old hash is removed, as a run removes it, once the request's run ends
            try await waitUntil("the old file is removed: \(directory.allFiles())", within: .seconds(60)) {
                !FileManager.default.fileExists(atPath: directory.path + "/out/a-16.\(hash).webp")
            }
            #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a-16.\(newHash).webp"))
        }
    }

    @Test func anOutputWithoutHashRefusesOneAndKeepsItsCacheControl() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let plainPath = #"{"name": "photo", "widths": [16], "formats": ["webp"], "path": "out/{stem}-{width}.webp"}"#
        try await withServer(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [plainPath]), in: directory) { server in
            let response = try await server.request("/photo/a.jpg")
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == nil && response.header("Content-Location") == nil)
            #expect(try await server.request("/photo/a.jpg?hash=0123456789").status == 400)
        }
        // A hashed output with no cacheControl asks caches to check again
        let hashedPath = #"{"name": "photo", "widths": [16], "formats": ["webp"], "path": "out/{stem}-{width}.{hash:8}.webp"}"#
        try await withServer(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [hashedPath]), in: directory) { server in
            let response = try await server.request("/photo/a.jpg")
            #expect(response.header("Cache-Control") == "no-cache")
            #expect(response.header("Content-Location")?.hasSuffix("&hash=" + String(SHA256.hex(response.body).prefix(8))) == true)
        }
    }

    @Test func aLargeHashedFileIsSentFromItsDescriptorAndHashedOnceAVersion() async throws {
        // Given a hashed output whose file is larger than the bodies kept in memory
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 400, height: 300)), to: "in/a.jpg")
        let full = #"{"name": "full", "encode": {"format": "png"}, "path": "out/{stem}.{hash}.png"}"#
        try await withServer(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [full]), in: directory) { server in
            let bodies = server.server.responder.bodies
            // When it is asked for, then by its hashed URL, by HEAD, and again with its tag
            let plain = try await server.request("/full/a.jpg")
            #expect(plain.status == 200 && plain.body.count > WarmBodies.largestFile, "\(plain.body.count) bytes")
            let hash = String(SHA256.hex(plain.body).prefix(10))
            let location = "/full/a.jpg?format=png&hash=\(hash)"
            #expect(plain.header("Content-Location") == location)
            let hashed = try await server.request(location)
            let head = try await server.request(location, method: "HEAD")
            let unchanged = try await server.request(location, headers: ["If-None-Match": try #require(plain.header("ETag"))])
            // Then each answer is of the bytes the name's hash is of, none read whole into memory,
            // and the file was hashed once
            #expect(hashed.status == 200 && hashed.body == plain.body)
            #expect(head.status == 200 && head.header("Content-Length") == "\(plain.body.count)")
            #expect(unchanged.status == 304)
            #expect(bodies.reads == 0 && bodies.hashReads == 1)
        }
    }

    @Test func aHashedURLWithoutWidthOrFormatNamesOneFileWhateverTheRequestAccepts() async throws {
        // Given a hashed output of two widths and two formats, with client hints
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.photo], extra: #""serve": {"clientHints": true}"#)
        try await withServer(json, in: directory) { server in
            // When the widest file in the fallback format is asked for by its hash alone
            let plain = try await server.request("/photo/a.jpg")
            let hash = String(SHA256.hex(plain.body).prefix(10))
            #expect(plain.header("Content-Location") == "/photo/a.jpg?width=32&format=webp&hash=\(hash)")
            // Then Accept and a width hint choose no other file for it, and the answer does not vary
            for headers in [["Accept": "image/avif"], ["Sec-CH-Width": "10"], [:]] {
                let hashed = try await server.request("/photo/a.jpg?hash=\(hash)", headers: headers)
                #expect(hashed.status == 200, "\(headers): \(String(decoding: hashed.body, as: UTF8.self))")
                #expect(hashed.body == plain.body, "\(headers)")
                #expect(hashed.header("Vary") == nil, "\(headers)")
            }
        }
    }

    @Test func theURLOfTheBytesNamesAWidthOnlyFromTheOutputsList() async throws {
        // Given an output that lists no widths, and one whose widest is past the photo's own
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let plain =
            #"{"name": "plain", "steps": [{"resize": {"width": 24}}], "encode": {"format": "webp"}, "path": "out/{stem}.{hash}.webp"}"#
        let wide = #"{"name": "wide", "widths": [16, 100], "formats": ["webp"], "path": "out/{stem}-{width}.{hash}.webp"}"#
        // and one whose widest is the photo's own, as "original"
        let original = #"{"name": "original", "widths": [16, "original"], "formats": ["webp"], "path": "out/o-{stem}-{width}.{hash}.webp"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [plain, wide, original])
        try await withServer(json, in: directory) { server in
            for target in ["/plain/a.jpg", "/wide/a.jpg", "/wide/a.jpg?width=100", "/original/a.jpg"] {
                // When a file is asked for without its hash
                let first = try await server.request(target)
                #expect(first.status == 200, "\(target)")
                // Then the URL it names gets the same bytes
                let location = try #require(first.header("Content-Location"), "\(target)")
                let again = try await server.request(location)
                #expect(again.status == 200, "\(target): \(location): \(String(decoding: again.body, as: UTF8.self))")
                #expect(again.body == first.body, "\(target): \(location)")
                #expect(target.hasPrefix("/plain") != location.contains("width="), "\(location)")
                #expect(target.hasPrefix("/original") == location.contains("width=original"), "\(location)")
            }
        }
    }
}
#endif
