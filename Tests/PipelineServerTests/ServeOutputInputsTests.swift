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
}
#endif
