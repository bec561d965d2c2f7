#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

/// Why the access log says a large answer was cut off, where the server cut it itself.
@Suite(.serialized) struct ServeCutOffCommandTests {
    @Test func anAnswerWhoseFileIsWrittenToInPlaceIsCutOffAndLoggedSo() async throws {
        // Given a server of a large PNG (9 MB of noise), made, and a client that has its
        // answer's first bytes
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 2000, height: 1500), quality: 95), to: "in/a.jpg")
        let big = #"{"name": "big", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [big]).utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        let made = try LoopbackHTTPClient.send(port: port, target: "/big/a.jpg")
        #expect(made.status == 200 && made.body.count > 4_000_000)
        let client = try LoopbackHTTPClient.stalledInAnswer(port: port, target: "/big/a.jpg")
        defer { close(client) }

        // When the file is written to in place (no run does), and the client reads on
        let handle = try #require(FileHandle(forWritingAtPath: directory.path + "/out/a.png"))
        try handle.write(contentsOf: Data(repeating: 7, count: 4096))
        try handle.close()
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while received < made.body.count + 4096 {
            let count = recv(client, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += count
        }

        // Then the client gets less than the whole, and the log says the server cut it off
        // because the file changed, not that the client left
        #expect(received < made.body.count)
        let line = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("cut off after") }
        #expect(line?.text.contains("its file was written to in place while it was sent") == true, "\(command.transcript)")
    }
}
#endif
