#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit
@testable import PipelineServer

/// `limits.itemTimeout` in `pipeline serve`: its runs are the batch runner's, so a request for
/// an input that takes too long fails alone, with the reason, and the server goes on.
@Suite(.serialized) struct ServeLimitTests {
    @Test func anInputPastItsTimeIsAClientErrorWithTheReason() async throws {
        // Given an animation far slower to decode than 1 ms, a photo, and a limit of 1 ms
        let directory = try TemporaryDirectory()
        try directory.write(GIFWriter.noise(frames: 300, width: 160, height: 120), to: "in/long.gif")
        let json = PipelineHarness.json(
            inputs: ["in/*.gif"],
            outputs: [#"{"name": "g", "steps": [{"resize": {"width": 80}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            extra: #""limits": {"itemTimeout": "1ms"}"#)
        try await withServer(json, in: directory) { server in
            // When the slow input's output is asked for
            let response = try await server.request("/g/long.gif")
            // Then it is refused as the input's fault, naming the input, the stage and the limit
            #expect(response.status == 422, "\(String(decoding: response.body, as: UTF8.self))")
            let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
            #expect(body?["error"] == "decompress: long.gif took longer than limits.itemTimeout (1ms) and was stopped while decoding")
            // And the server still answers
            #expect(try await server.request("/healthz").status == 200)
        }
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }
}
#endif
