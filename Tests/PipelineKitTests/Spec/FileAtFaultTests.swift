import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// A problem about a file beside the pipeline file names that file, so that `watch` and `serve`
/// can watch for the change that mends it.
@Suite struct FileAtFaultTests {
    @Test func aProblemAboutAFileTheStepsTheEncoderTheFocusPointsOrTheServerReadNamesIt() throws {
        let directory = try TemporaryDirectory()
        let output = { (steps: String, encode: String) in
            #"{"name": "o", "steps": [\#(steps)], "encode": {\#(encode)}, "path": "out/{stem}.jpg"}"#
        }
        let cases: [(json: String, file: String)] = [
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [output(#"{"composite": {"image": "marks/logo.png"}}"#, #""format": "jpeg""#)]),
                "marks/logo.png"
            ),
            (
                PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("", #""format": "jpeg", "iccProfile": "icc/brand.icc""#)]),
                "icc/brand.icc"
            ),
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [output("", #""format": "jpeg""#)], extra: #""focusPoints": "focus.json""#),
                "focus.json"
            ),
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [output("", #""format": "jpeg""#)], extra: #""serve": {"fallback": "missing.png"}"#),
                "missing.png"
            ),
        ]
        for (json, file) in cases {
            // When a pipeline names a file that is not there
            do {
                _ = try PipelineDefinition(json: json, baseDirectory: directory.url, processors: .standard)
                Issue.record("\(file): the pipeline was taken")
            } catch {
                // Then its problem names that file, absolute
                #expect(error.problems.map(\.fileAtFault) == [directory.url.appendingPathComponent(file).path], "\(error)")
            }
        }
        // And a problem in the pipeline file's own text names none
        let wrong = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output(#"{"blur": {"sigma": -1}}"#, #""format": "jpeg""#)])
        do {
            _ = try PipelineDefinition(json: wrong, baseDirectory: directory.url, processors: .standard)
            Issue.record("a blur of sigma -1 was taken")
        } catch {
            #expect(error.problems.allSatisfy { $0.fileAtFault == nil }, "\(error)")
        }
    }
}
