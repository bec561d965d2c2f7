#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `serve.fallback`: an input that cannot be read as an image is answered with the fallback
/// image, marked as such, where it would get 422; everything else is answered as before.
@Suite struct FallbackImageTests {
    static let thumb = #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#

    func folder() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/good.jpg")
        try directory.write(Data("<html>404 Not Found</html>\n".utf8), to: "in/bad.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "fallback.png")
        return directory
    }

    @Test func anInputThatIsNoImageGetsTheFallback() async throws {
        let directory = try folder()
        let fallback = try Data(contentsOf: directory.url.appendingPathComponent("fallback.png"))
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""serve": {"fallback": "fallback.png"}"#)
        try await withServer(json, in: directory) { server in
            let bad = try await server.request("/thumb/bad.jpg")
            #expect(bad.status == 200)
            #expect(bad.body == fallback)
            #expect(bad.header("Content-Type") == "image/png" && bad.header("X-Pipeline-Fallback") == "1")
            #expect(bad.header("Cache-Control") == "no-cache")
            let good = try await server.request("/thumb/good.jpg")
            #expect(good.status == 200 && good.header("X-Pipeline-Fallback") == nil)
            #expect(try VipsImage.open(data: good.body).width == 16)
            // What is not a failure to read or make an input is refused as before
            #expect(try await server.request("/thumb/missing.jpg").status == 404)
        }
        // Without the key, the input is refused
        try await withServer(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb]), in: directory) { server in
            let bad = try await server.request("/thumb/bad.jpg")
            #expect(bad.status == 422 && bad.header("X-Pipeline-Fallback") == nil)
        }
    }

    /// As imgproxy makes its fallback into the file asked for, the fallback is made as narrow as
    /// the width the URL asks for (or a hint chooses, or the widest listed), never wider than it is.
    @Test func theFallbackIsAsNarrowAsTheWidthAskedFor() async throws {
        let directory = try folder()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 48, height: 30)), to: "fallback.png")
        let set = #"{"name": "set", "widths": [12, 24, 96], "formats": ["webp"], "path": "out/{stem}-{width}.webp"}"#
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [set], extra: #""serve": {"fallback": "fallback.png", "clientHints": true}"#)
        try await withServer(json, in: directory) { server in
            let narrow = try await server.request("/set/bad.jpg?width=12")
            #expect(narrow.status == 200 && narrow.header("X-Pipeline-Fallback") == "1")
            #expect(narrow.header("Content-Type") == "image/png")
            let image = try VipsImage.open(data: narrow.body)
            #expect(image.width == 12 && image.height == 8, "\(image.width)×\(image.height)")
            #expect(try await server.request("/set/bad.jpg?width=12").body == narrow.body)
            // A hint chooses the width, and the answer varies by it
            let hinted = try await server.request("/set/bad.jpg", headers: ["Sec-CH-Width": "20"])
            #expect(try VipsImage.open(data: hinted.body).width == 24)
            #expect(hinted.header("Vary")?.contains("Sec-CH-Width") == true, "\(hinted.headers)")
            // Without a width, the widest listed, which is wider than the image: as it is
            let widest = try await server.request("/set/bad.jpg")
            #expect(widest.body == (try Data(contentsOf: directory.url.appendingPathComponent("fallback.png"))))
        }
    }

    /// Where it is not narrowed (an output without widths), the fallback is answered at its own
    /// size: a camera's EXIF in it, with GPS, must not go out with it.
    @Test func aFallbackHoldingACamerasEXIFIsAnsweredWithoutIt() async throws {
        let directory = try folder()
        let photo = try Fixtures.gradient(width: 40, height: 30).settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
            .settingStringField("exif-ifd3-GPSLatitudeRef", to: "N")
        let file = try photo.encoded(suffix: ".jpg")
        #expect(file.range(of: Data("PipelineTestCamera".utf8)) != nil)
        try directory.write(file, to: "fallback.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""serve": {"fallback": "fallback.jpg"}"#)
        try await withServer(json, in: directory) { server in
            let bad = try await server.request("/thumb/bad.jpg")
            #expect(bad.status == 200 && bad.header("X-Pipeline-Fallback") == "1" && bad.header("Content-Type") == "image/jpeg")
            #expect(bad.body.range(of: Data("PipelineTestCamera".utf8)) == nil)
            let image = try VipsImage.open(data: bad.body)
            #expect(image.width == 40 && image.height == 30)
            #expect(image.stringField("exif-ifd3-GPSLatitudeRef") == nil)
        }
    }

    @Test func anOutputOntoTheFallbackIsRefused() throws {
        // Given an output of one input whose path is the fallback image
        let directory = try folder()
        let before = try Data(contentsOf: directory.url.appendingPathComponent("fallback.png"))
        let onto = #"{"name": "thumb", "encode": {"format": "png"}, "path": "fallback.png"}"#
        let json = PipelineHarness.json(inputs: ["in/good.jpg"], outputs: [onto], extra: #""serve": {"fallback": "fallback.png"}"#)

        // Then planning refuses it, naming the fallback image, which is as it was
        #expect {
            _ = try PipelineHarness.pipeline(json, in: directory).plan()
        } throws: { error in
            "\(error)".contains("would overwrite the fallback image \(directory.path)/fallback.png")
        }
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("fallback.png")) == before)
    }

    @Test(arguments: [
        ("missing.png", "cannot read the fallback image"),
        ("in/bad.jpg", "is not an image"),
        ("fallback.txt", "must end in one of .jpg, .png"),
        ("fallback.webp", #"the fallback image "fallback.webp" is png, not the webp its extension names as its Content-Type"#),
        // made narrower for requests, it is held to the pixels an input is
        ("huge.png", #"the fallback image "huge.png" is 100000×100000, more than the "#),
    ])
    func aFallbackThatIsNoImageIsRefusedAtItsPath(file: String, message: String) throws {
        let directory = try folder()
        try directory.write(Data("text".utf8), to: "fallback.txt")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "fallback.webp")
        try directory.write(try HostileFixtures.pngDeclaring(width: 100_000, height: 100_000), to: "huge.png")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""serve": {"fallback": "\#(file)"}"#)
        let error = try #require(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory) }
        #expect(error.problems.contains { $0.path == "serve.fallback" && $0.message.contains(message) }, "\(error)")
    }
}
#endif
