import Foundation
import PipelineKit
import StandardProcessors
import TestSupport
import Testing

/// The `process` stage's settings were once named `resize`: old files still load, with a warning.
struct RenamedKeyTests {
    private func json(_ stages: String) -> String {
        """
        {"version": 1, "inputs": ["*.jpg"], "allowEmpty": true,
         \(stages),
         "outputs": [{"name": "t", "steps": [{"resize": {"width": 10}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}
        """
    }

    @Test func theOldResizeKeyIsReadWithAWarningNamingItsLine() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try PipelineHarness.pipeline(json(#""resize": {"concurrency": 3}"#), in: directory)
        #expect(pipeline.definition.process.concurrency == 3)
        #expect(
            pipeline.definition.warnings == [
                #"resize (line 2): "resize" is now named "process"; the old name is read until the next format version"#
            ])
        #expect(try pipeline.plan().warnings.contains(pipeline.definition.warnings[0]))
    }

    @Test func theNewProcessKeyGivesNoWarning() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try PipelineHarness.pipeline(json(#""process": {"concurrency": 2}"#), in: directory)
        #expect(pipeline.definition.process.concurrency == 2)
        #expect(pipeline.definition.warnings.isEmpty)
    }

    @Test func bothKeysAreAnErrorAtTheOldOne() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try PipelineHarness.pipeline(json(#""process": {"concurrency": 2}, "resize": {"concurrency": 1}"#), in: directory)
        } throws: { error in
            let problems = (error as? PipelineFileError)?.problems ?? []
            return problems.map(\.path) == ["resize"] && problems[0].message.contains("give only \"process\"")
        }
    }

    /// `validate` lists every problem at once: the two keys are one even beside a value out of range.
    @Test func bothKeysAreAnErrorBesideAnotherProblem() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try PipelineHarness.pipeline(
                json(#""fetch": {"retries": 11}, "process": {"concurrency": 2}, "resize": {"concurrency": 1}"#), in: directory)
        } throws: { error in
            let problems = (error as? PipelineFileError)?.problems ?? []
            return Set(problems.map(\.path)) == ["fetch.retries", "resize"]
        }
    }
}
