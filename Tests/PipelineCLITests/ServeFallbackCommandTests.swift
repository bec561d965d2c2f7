#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

/// `serve.fallback`'s image is watched as the pipeline file is: a new image is answered from
/// then on, and one removed or broken is reported while the last valid image goes on.
@Suite(.serialized) struct ServeFallbackCommandTests {
    @Test func aReplacedFallbackIsServedAndABrokenOrRemovedOneIsReportedWhileTheLastGoesOn() throws {
        // Given a server whose fallback stands in for an input that is no image
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/good.jpg")
        try directory.write(Data("<html>404 Not Found</html>\n".utf8), to: "in/bad.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "fallback.png")
        let thumb = #"{"name": "thumb", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [thumb], extra: #""serve": {"fallback": "fallback.png"}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        let fallback = directory.url.appendingPathComponent("fallback.png")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/bad.jpg").body == Data(contentsOf: fallback))

        // When another image takes its place, it is answered from then on
        var mark = command.lineCount
        let replacement = try Fixtures.png(try Fixtures.solid(width: 6, height: 6, colour: Fixtures.grey))
        try replacement.write(to: fallback, options: .atomic)
        let reloaded = command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.contains("reloaded") }
        #expect(reloaded != nil, "\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/bad.jpg").body == replacement)

        // When it is broken, or removed, that is reported, and the last valid image is answered
        for change in ["broken", "removed"] {
            mark = command.lineCount
            if change == "broken" {
                try Data("not a PNG".utf8).write(to: fallback, options: .atomic)
            } else {
                try FileManager.default.removeItem(at: fallback)
            }
            let kept = command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.contains("keeping the last valid pipeline") }
            #expect(kept != nil, "\(change): \(command.transcript)")
            let answer = try LoopbackHTTPClient.send(port: port, target: "/thumb/bad.jpg")
            #expect(answer.status == 200 && answer.body == replacement, "\(change): \(answer.status)")
            #expect(answer.header("X-Pipeline-Fallback") == "1")
        }
    }
}
#endif
