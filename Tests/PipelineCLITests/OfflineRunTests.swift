import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `pipeline run` with the origin of its remote inputs down: the cache carries the run.
@Suite struct OfflineRunTests {
    @Test func aRunWithTheOriginDownSucceedsWithOneWarningLine() throws {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 90, height: 60))
        let server = try TestHTTPServer { _, _ in .init(status: 200, headers: ["ETag": "\"1\""], body: photo) }
        let directory = try TemporaryDirectory()
        let urls = (0..<3).map { server.url("/p\($0).jpg") }
        let json = """
            {"version": 1, "inputs": [\(urls.map { "\"\($0)\"" }.joined(separator: ", "))],
             "fetch": {"retries": 0}, "cache": {"directory": "cache"},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": 30}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        let first = try CommandRunner.run(["run", file])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(!first.standardError.contains("staleIfError"))

        server.stop()
        let offline = try CommandRunner.run(["run", file])
        #expect(offline.status == 0, "\(offline.standardError)")
        let warnings = offline.standardError.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("3 remote inputs") == true, "\(warnings)")
        #expect(offline.standardOutput.contains("0 outputs written, 3 up to date"), "\(offline.standardOutput)")
    }
}
