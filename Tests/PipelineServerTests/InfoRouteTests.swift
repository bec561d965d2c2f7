#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `GET /info/{input}`: an input's size, format, alpha, orientation and declared placeholders,
/// from a real server over real files.
@Suite(.serialized) struct InfoRouteTests {
    static let thumb = ServeTests.thumb
    /// An output that declares two of the placeholders, for inputs whose `"inputs"` it takes.
    static let placeholdersOutput =
        #"{"name": "card", "steps": [{"resize": {"width": 24}}], "encode": {"format": "png"}, "path": "out/{dir}/{stem}-card.png", "placeholders": ["blurhash", "dominantColor"]}"#

    /// A folder with a landscape JPEG tagged orientation 6, a PNG with alpha, a solid PNG and a
    /// file that is no image, all in `in/`.
    static func folder() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32).withOrientation(6)), to: "in/turned.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 40, height: 20, bands: 4)), to: "in/sub/alpha.png")
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 30, height: 20, colour: [200, 100, 50])), to: "in/solid.png")
        try directory.write(Data("not an image at all".utf8), to: "in/broken.png")
        return directory
    }

    static func json(_ body: LoopbackHTTPClient.Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: body.body) as? [String: Any], "\(String(decoding: body.body, as: UTF8.self))")
    }

    @Test func answersTheUprightSizeFormatAlphaAndOrientation() async throws {
        let directory = try Self.folder()
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg", "in/**/*.png"], outputs: [Self.thumb], extra: #""serve": {"cacheControl": "public, max-age=60"}"#)
        try await withServer(json, in: directory) { server in
            // A JPEG stored 48×32 whose EXIF says to turn it a quarter: 32×48 upright
            let turned = try await server.request("/info/turned.jpg")
            #expect(turned.status == 200, "\(String(decoding: turned.body, as: UTF8.self))")
            #expect(turned.header("Content-Type") == "application/json")
            #expect(turned.header("Cache-Control") == "public, max-age=60")
            let facts = try Self.json(turned)
            #expect(facts["width"] as? Int == 32)
            #expect(facts["height"] as? Int == 48)
            #expect(facts["orientation"] as? Int == 6)
            #expect(facts["format"] as? String == "jpeg")
            #expect(facts["hasAlpha"] as? Bool == false)
            // The file declares no placeholders: none is given
            #expect(Set(facts.keys) == ["width", "height", "format", "hasAlpha", "orientation"])

            let alpha = try Self.json(try await server.request("/info/sub/alpha.png"))
            #expect(alpha["format"] as? String == "png")
            #expect(alpha["hasAlpha"] as? Bool == true)
            #expect(alpha["width"] as? Int == 40 && alpha["height"] as? Int == 20)
            #expect(alpha["orientation"] as? Int == 1)

            // An ETag from the input's version: 304 while it is unchanged, another once it changes
            let tag = try #require(turned.header("ETag"))
            #expect(try await server.request("/info/turned.jpg", headers: ["If-None-Match": tag]).status == 304)
            let head = try await server.request("/info/turned.jpg", method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty && head.header("ETag") == tag)
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 50, height: 30)), to: "in/turned.jpg")
            let changed = try await server.request("/info/turned.jpg", headers: ["If-None-Match": tag])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") != tag)
            #expect(try Self.json(changed)["orientation"] as? Int == 1)
            // No output was made for any of it
            #expect(await server.maker.runsStarted == 0)
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
        }
    }

    @Test func refusesAnUnknownInputABrokenOneAndOnePastALimit() async throws {
        let directory = try Self.folder()
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg", "in/**/*.png"], outputs: [Self.thumb], extra: #""decompress": {"maxPixels": 1000}"#)
        try await withServer(json, in: directory) { server in
            for target in ["/info/missing.jpg", "/info/..%2Fp.json", "/info/%2e%2e/in/solid.png", "/info/", "/info"] {
                let response = try await server.request(target)
                #expect(response.status == 404, "\(target)")
                let reason = try #require(try Self.json(response)["error"] as? String)
                #expect(!reason.contains(directory.path), "\(target): \(reason)")
            }
            #expect(
                try Self.json(try await server.request("/info/missing.jpg"))["error"] as? String
                    == "no input missing.jpg in the pipeline file")

            let broken = try await server.request("/info/broken.png")
            #expect(broken.status == 422)
            let reason = try #require(try Self.json(broken)["error"] as? String)
            #expect(reason.hasPrefix("decompress: "), "\(reason)")
            #expect(reason.contains("broken.png") && !reason.contains(directory.path), "\(reason)")

            // 48×32 is more than decompress.maxPixels: refused from the header, as a run refuses it
            let large = try await server.request("/info/turned.jpg")
            #expect(large.status == 413)
            #expect((try Self.json(large)["error"] as? String)?.contains("decompress.maxPixels") == true)
            #expect(try await server.request("/info/solid.png").status == 200)
        }
    }

    /// The placeholders' decode of a file that cannot shrink on load (an interlaced PNG is read
    /// whole) is admitted by the memory budget the runs share: one that can never fit is 413, as
    /// on an output's route, where `/info` decoded it past the budget.
    @Test func aPlaceholderDecodePastTheMemoryBudgetIs413() async throws {
        let directory = try TemporaryDirectory()
        let black = try #require(
            try Vips.call("black", ["width": .integer(4000), "height": .integer(4000), "bands": .integer(3)])["out"]?.image)
        try directory.write(try black.encoded(suffix: ".png[interlace=true,compression=1]"), to: "in/large.png")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 40, height: 20)), to: "in/small.png")
        let json = PipelineHarness.json(inputs: ["in/*.png"], outputs: [Self.placeholdersOutput])
        // A budget of about 24 MB for images, beside what this process holds now
        let probe = Int64(1) << 40
        let maxMemory = probe - (try #require(MemoryBudget.detect(explicit: probe))).bytes + 24_000_000
        try await withServer(json, in: directory, maxMemory: maxMemory) { server in
            let large = try await server.request("/info/large.png")
            #expect(large.status == 413, "\(String(decoding: large.body, as: UTF8.self))")
            let reason = try #require(try Self.json(large)["error"] as? String)
            #expect(reason.contains("decoding it for its placeholders needs about"), "\(reason)")
            // as on the output's route; and one that fits is answered
            #expect(try await server.request("/card/large.png").status == 413)
            let small = try await server.request("/info/small.png")
            #expect(small.status == 200, "\(String(decoding: small.body, as: UTF8.self))")
            #expect(try Self.json(small)["blurhash"] != nil)
        }
    }

    @Test func aRemoteInputThatCannotBeFetchedIs502() async throws {
        let directory = try Self.folder()
        let origin = try TestHTTPServer { _, _ in .init(status: 500, body: Data("down".utf8)) }
        defer { origin.stop() }
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg")], outputs: [Self.thumb], extra: #""fetch": {"retries": 0}"#)
        try await withServer(json, in: directory) { server in
            let response = try await server.request("/info/127.0.0.1_\(origin.port)/photo.jpg")
            #expect(response.status == 502, "\(String(decoding: response.body, as: UTF8.self))")
            #expect((try Self.json(response)["error"] as? String)?.hasPrefix("fetch: ") == true)
        }
    }

    @Test func givesThePlaceholdersTheFileDeclaresForThatInput() async throws {
        let directory = try Self.folder()
        // The placeholders' output is made for the PNGs only
        let card = Self.placeholdersOutput.replacingOccurrences(of: #""placeholders""#, with: #""inputs": ["in/**/*.png"], "placeholders""#)
        let json = PipelineHarness.json(inputs: ["in/**/*.jpg", "in/**/*.png"], outputs: [Self.thumb, card])
        let cutout = try Fixtures.image(width: 40, height: 20, bands: 4) { x, _ in [90, 160, 30, x < 20 ? 255 : 0] }
        try directory.write(try Fixtures.png(cutout), to: "in/cutout.png")
        try await withServer(json, in: directory) { server in
            let solid = try Self.json(try await server.request("/info/solid.png"))
            // sharp's dominant colour of (200, 100, 50): the centres of its bins
            #expect(solid["dominantColor"] as? String == "#c86838")
            #expect(solid["thumbhash"] == nil && solid["lqip"] == nil)
            let alpha = try Self.json(try await server.request("/info/sub/alpha.png"))
            let image = try VipsImage.open(file: directory.path + "/in/sub/alpha.png")
            let expected = try Placeholders(of: image, kinds: [.blurhash, .dominantColor])
            #expect(alpha["blurhash"] as? String == expected.blurhash)
            #expect(alpha["dominantColor"] as? String == expected.dominantColor)
            // An opaque alpha band lets nothing through; half a transparent image does
            #expect(alpha["transparent"] == nil && solid["transparent"] == nil)
            #expect(try Self.json(try await server.request("/info/cutout.png"))["transparent"] as? Bool == true)
            // The JPEG is left out of the output that declares them
            let turned = try Self.json(try await server.request("/info/turned.jpg"))
            #expect(turned["blurhash"] == nil && turned["dominantColor"] == nil)
            #expect(await server.maker.runsStarted == 0)
        }
    }

    @Test func anAnimationThatOpensOnAClearFrameHasThePlaceholdersOfTheFirstFrameSeenAndMaxFramesApplies() async throws {
        // Given a WebP animation that opens on a clear frame, then green, in two frames
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.animationOpeningOnAClearFrame(), to: "in/fade.webp")
        let card = Self.placeholdersOutput.replacingOccurrences(of: "png", with: "webp")
        for (maxFrames, status) in [(1000, 200), (1, 413)] {
            let json = PipelineHarness.json(
                inputs: ["in/*.webp"], outputs: [card], extra: #""decompress": {"maxFrames": \#(maxFrames)}"#)
            try await withServer(json, in: directory) { server in
                // When its info is asked for
                let response = try await server.request("/info/fade.webp")
                // Then its colour is the green seen, as the manifest's is, not the clear frame's
                // black; and an animation of more frames than maxFrames is refused, as a run refuses it
                #expect(response.status == status, "\(String(decoding: response.body, as: UTF8.self))")
                let body = try Self.json(response)
                if status == 200 {
                    #expect(body["dominantColor"] as? String == "#08c808", "\(body)")
                } else {
                    #expect((body["error"] as? String)?.contains("decompress.maxFrames (1)") == true, "\(body)")
                }
            }
        }
    }

    @Test func anInputAskedForAgainIsAnsweredWithoutADecodeUntilItChanges() async throws {
        let directory = try Self.folder()
        let json = PipelineHarness.json(inputs: ["in/**/*.png"], outputs: [Self.placeholdersOutput])
        try await withServer(json, in: directory) { server in
            // Asked for twice: one body made, the same bytes both times
            let first = try await server.request("/info/solid.png")
            let again = try await server.request("/info/solid.png")
            #expect(first.status == 200 && again.body == first.body && again.header("ETag") == first.header("ETag"))
            #expect(server.server.info.answered.kept == 1)
            // Once the file is another image, it is read again
            try directory.write(try Fixtures.png(try Fixtures.solid(width: 30, height: 20, colour: [10, 20, 250])), to: "in/solid.png")
            let changed = try Self.json(try await server.request("/info/solid.png"))
            #expect(changed["dominantColor"] as? String != (try Self.json(first))["dominantColor"] as? String)
            #expect(server.server.info.answered.kept == 2)
        }
    }

    @Test func placeholdersOfALargeImageAreMadeFromItShrunk() async throws {
        let directory = try TemporaryDirectory()
        let image = try Fixtures.solid(width: 2400, height: 1600, colour: [10, 200, 30])
        try directory.write(try Fixtures.png(image), to: "in/wide.png")
        try directory.write(try Fixtures.jpeg(image), to: "in/wide-jpeg.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.png", "in/*.jpg"], outputs: [Self.placeholdersOutput])
        try await withServer(json, in: directory) { server in
            let expected = try Placeholders(of: image, kinds: [.blurhash, .dominantColor])
            #expect(expected.dominantColor == "#08c818")
            for name in ["wide.png", "wide-jpeg.jpg"] {
                let facts = try Self.json(try await server.request("/info/" + name))
                #expect(facts["width"] as? Int == 2400 && facts["height"] as? Int == 1600, "\(name)")
                #expect(facts["dominantColor"] as? String == expected.dominantColor, "\(name)")
                #expect(facts["blurhash"] as? String == expected.blurhash, "\(name)")
            }
        }
    }

    @Test func isSignedAsTheOtherPathsAreAndHealthAndMetricsAreNot() async throws {
        let directory = try Self.folder()
        let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
        let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
        let json = PipelineHarness.json(
            inputs: ["in/**/*.png"], outputs: [Self.thumb], extra: #""serve": {"key": "\#(key)", "salt": "\#(salt)"}"#)
        let signing = try #require(
            ServeSettings.Signing.bytes(hex: key).flatMap { key in
                ServeSettings.Signing.bytes(hex: salt).map { ServeSettings.Signing(key: key, salt: $0) }
            })
        let signature = URLSignature(signing)
        let signed = "/" + signature.signature(of: "/info/sub/alpha.png") + "/info/sub/alpha.png"
        try await withServer(json, in: directory) { server in
            let good = try await server.request(signed)
            #expect(good.status == 200, "\(String(decoding: good.body, as: UTF8.self))")
            #expect(try Self.json(good)["hasAlpha"] as? Bool == true)
            let other = "/" + signature.signature(of: "/info/solid.png")
            for target in ["/info/sub/alpha.png", other + "/info/sub/alpha.png", "/insecure/info/sub/alpha.png"] {
                #expect(try await server.request(target).status == 403, "\(target)")
            }
            #expect(try await server.request("/healthz").status == 200)
            #expect(try await server.request("/metrics").status == 200)
        }
    }
}
#endif
