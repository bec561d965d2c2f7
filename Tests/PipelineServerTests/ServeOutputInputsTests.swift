#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

@testable import PipelineServer

/// `pipeline serve` offers an output with `"inputs"` for the inputs its globs match only.
@Suite struct ServeOutputInputsTests {
    @Test func anOutputIsNotOfferedForAnInputItsGlobsLeaveOut() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 40, height: 30)), to: "anim/s.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg", "anim/*.png"],
            outputs: [
                #"{"name": "loop", "inputs": ["anim/*"], "encode": {"format": "webp"}, "path": "out/loop/{stem}.webp"}"#,
                #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "jpeg"}, "path": "out/thumb/{stem}.jpg"}"#,
            ])
        try await withServer(json, in: directory) { server in
            let refused = try await server.request("/loop/a.jpg")
            #expect(refused.status == 404)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("not made for that input"))
            #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out/loop/a.webp").path))
            let made = try await server.request("/loop/s.png")
            #expect(made.status == 200)
            #expect(try VipsImage.open(data: made.body).width == 40)
            #expect(try await server.request("/thumb/a.jpg").status == 200)
        }
    }

    @Test func twoInputsOfOneNameUnderTwoGlobsAreEachServedByTheirOwnOutput() async throws {
        // Given a/x.jpg and b/x.jpg, two photos that a URL names x.jpg, each with its own output
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "a/x.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "b/x.jpg")
        let json = PipelineHarness.json(
            inputs: ["a/*.jpg", "b/*.jpg"],
            outputs: [
                #"{"name": "wide", "inputs": ["a/*.jpg"], "encode": {"format": "png"}, "path": "out/a/{stem}.png"}"#,
                #"{"name": "narrow", "inputs": ["b/*.jpg"], "encode": {"format": "png"}, "path": "out/b/{stem}.png"}"#,
            ])
        try await withServer(json, in: directory) { server in
            // Then each output answers with its own input's file, as a batch run makes them
            let wide = try await server.request("/wide/x.jpg")
            #expect(wide.status == 200)
            #expect(try VipsImage.open(data: wide.body).width == 64)
            let narrow = try await server.request("/narrow/x.jpg")
            #expect(narrow.status == 200, "\(String(decoding: narrow.body, as: UTF8.self))")
            #expect(try VipsImage.open(data: narrow.body).width == 40)
            // and again, from the disk
            #expect(try VipsImage.open(data: try await server.request("/narrow/x.jpg").body).width == 40)
        }
    }
}
#endif
