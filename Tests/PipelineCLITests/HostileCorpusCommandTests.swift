import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The hostile corpus through `pipeline run`, in a process of its own, where libvips' error
/// buffer is the command's alone, one input at a time: the buffer is one for the process, and
/// two inputs failing at once may each take the other's line (a known limit of libvips).
@Suite struct HostileCorpusCommandTests {
    static let cases = CorpusCase.hostileCorpus

    @Test func theCorpusFromTheCommandLineGivesEachFailureItsInputStageAndReason() throws {
        // Given every corpus file in one folder and a pipeline file for them
        let directory = try TemporaryDirectory()
        for corpusCase in Self.cases { try directory.write(try corpusCase.make(), to: "in/\(corpusCase.file)") }
        let pipeline = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#
            ], extra: #""inFlight": 1"#)
        let file = try directory.write(Data(pipeline.utf8), to: "pipeline.json")
        // When `pipeline run` runs them one at a time (its own process: its libvips error buffer is its own)
        let result = try CommandRunner.run(["run", file])
        // Then it exits 1 and prints one line per broken file: input, stage and reason
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        for corpusCase in Self.cases {
            let prefix = "failed: in/\(corpusCase.file): "
            let printed = lines.filter { $0.hasPrefix(prefix) }
            switch corpusCase.outcome {
            case .processed:
                #expect(printed.isEmpty, "\(corpusCase.file): \(printed)")
            case .refused(let stage, let reason), .failed(let stage, let reason), .damaged(let stage, let reason):
                #expect(printed.count == 1, "\(corpusCase.file): \(printed)")
                #expect(printed.first?.hasPrefix(prefix + stage.rawValue + ": ") == true, "\(printed)")
                let reasons = reason.split(separator: "|").map(String.init)
                #expect(
                    reasons.contains { printed.first?.contains($0) == true }, "\(corpusCase.file): expected \"\(reason)\" in \(printed)")
            }
        }
        let failures = Self.cases.filter(\.outcome.isFailure).count
        #expect(result.standardOutput.contains("\(Self.cases.count) inputs, \(Self.cases.count - failures) succeeded, \(failures) failed"))
    }
}
