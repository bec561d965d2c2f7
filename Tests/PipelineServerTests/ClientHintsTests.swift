#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `serve.clientHints`: answers ask for width hints, and a request without `?width=` that sends
/// one gets the smallest listed width at least that wide.
@Suite struct ClientHintsTests {
    static let photo = #"{"name": "photo", "widths": [16, 24, 32], "formats": ["webp"], "path": "out/{stem}-{width}.webp"}"#

    @Test func aWidthHintPicksTheSmallestWidthAtLeastThatWide() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.photo])
        let catalog = OutputCatalog(plan: try PipelineHarness.pipeline(json, in: directory).plan())
        func width(_ hints: [(name: String, value: String?)], query: [(name: String, value: String)] = []) throws -> (Int?, [String]) {
            let request = try OutputRequest(path: "/photo/a.jpg", query: query, accept: nil, catalog: catalog, hints: hints)
            return (request.width, request.varyingHints)
        }
        let both = ["Sec-CH-Width", "Width"]
        #expect(try width([("Sec-CH-Width", "20"), ("Width", "30")]) == (24, both))
        #expect(try width([("Sec-CH-Width", nil), ("Width", "16")]) == (16, both))
        #expect(try width([("Sec-CH-Width", "16.5"), ("Width", nil)]) == (24, both))
        #expect(try width([("Sec-CH-Width", "4000"), ("Width", nil)]) == (32, both))
        // Hints that give no width still decide, for a cache, that the answer is the widest
        #expect(try width([("Sec-CH-Width", "abc"), ("Width", "-3")]) == (nil, both))
        // A hint is digits, as browsers send it: no hex, exponent or sign
        for odd in ["0x14", "1e1", "0x1p4", "+20", "20.", ".5", "inf"] {
            #expect(try width([("Sec-CH-Width", odd), ("Width", nil)]) == (nil, both), "\(odd)")
        }
        // A width asked for is decided by no hint
        #expect(try width([("Sec-CH-Width", "20"), ("Width", nil)], query: [("width", "32")]) == (32, []))
        #expect(try width([]) == (nil, []))
    }

    @Test func anOriginalWidthIsAskedForByNameAndHintedPastTheNumberedWidths() async throws {
        // Given an output of 16 px and the image's own width, 48 px, with client hints
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let output = #"{"name": "photo", "widths": [16, "original"], "formats": ["webp"], "path": "out/{stem}-{width}.webp"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output], extra: #""serve": {"clientHints": true}"#)
        try await withServer(json, in: directory) { server in
            // Then ?width=original, a hint wider than 16 and no width at all get the original
            for (target, hint) in [("/photo/a.jpg?width=original", nil), ("/photo/a.jpg", "40"), ("/photo/a.jpg", nil)] {
                let answer = try await server.request(target, headers: hint.map { ["Sec-CH-Width": $0] } ?? [:])
                #expect(answer.status == 200, "\(target) \(hint ?? "")")
                #expect(try VipsImage.open(data: answer.body).width == 48, "\(target) \(hint ?? "")")
            }
            // and a hint of 16 or less, the 16 px file
            let small = try await server.request("/photo/a.jpg", headers: ["Sec-CH-Width": "12"])
            #expect(try VipsImage.open(data: small.body).width == 16)
            // while a width not listed names "original" among those it may be
            let refused = try await server.request("/photo/a.jpg?width=48")
            #expect(refused.status == 400)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("its widths are 16, original"))
        }
    }

    @Test func aServerWithClientHintsAsksForThemAndFollowsThem() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.photo], extra: #""serve": {"clientHints": true}"#)
        #expect(try PipelineHarness.pipeline(json, in: directory).definition.serve.clientHints)
        try await withServer(json, in: directory) { server in
            let hinted = try await server.request("/photo/a.jpg", headers: ["Sec-CH-Width": "20"])
            #expect(hinted.status == 200)
            #expect(try VipsImage.open(data: hinted.body).width == 24)
            #expect(hinted.header("Accept-CH") == "Sec-CH-Width, Sec-CH-DPR, Width, DPR")
            #expect(hinted.header("Vary") == "Sec-CH-Width, Width")
            let old = try await server.request("/photo/a.jpg", headers: ["Width": "10"])
            #expect(try VipsImage.open(data: old.body).width == 16)
            #expect(old.header("Vary") == "Sec-CH-Width, Width")
            // Without a hint, the widest: which a cache must not give a request with one
            let none = try await server.request("/photo/a.jpg")
            #expect(try VipsImage.open(data: none.body).width == 32)
            #expect(none.header("Vary") == "Sec-CH-Width, Width")
            let asked = try await server.request("/photo/a.jpg?width=16", headers: ["Sec-CH-Width": "30"])
            #expect(try VipsImage.open(data: asked.body).width == 16)
            #expect(asked.header("Vary") == nil)
        }
        // Without the key: no Accept-CH, and hints are not followed
        let plain = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.photo])
        try await withServer(plain, in: directory) { server in
            let response = try await server.request("/photo/a.jpg", headers: ["Sec-CH-Width": "20"])
            #expect(response.header("Accept-CH") == nil)
            #expect(try VipsImage.open(data: response.body).width == 32)
        }
    }
}
#endif
