import Foundation
import TestSupport
import Testing

/// A trace that cannot be written is said as the system says it, with its path.
@Suite struct TraceWriteFailureTests {
    @Test func aTraceInAMissingFolderNamesThePathAndTheReason() throws {
        // Given a run whose trace goes to a folder that does not exist
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let file = try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*.jpg"],
                    outputs: [
                        #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
                    ]
                ).utf8), to: "pipeline.json")
        let trace = directory.path + "/missing/trace.json"
        // When it runs
        let result = try CommandRunner.run(["run", "--trace", trace, file])
        // Then it fails saying which file and why, without a Foundation error dump
        #expect(result.status == 1)
        #expect(result.standardError.contains("cannot write the trace to \(trace): No such file or directory"), "\(result.standardError)")
        #expect(
            !result.standardError.contains("NSCocoaErrorDomain") && !result.standardError.contains("Error Domain"),
            "\(result.standardError)")
    }
}
