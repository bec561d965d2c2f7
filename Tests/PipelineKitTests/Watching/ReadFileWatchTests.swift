import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// `pipeline watch` sees the focus file: a change to it is a change that matters.
@Suite struct FocusFileWatchTests {
    @Test func theFocusFileIsWatched() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data(#"{"in/a.jpg": [0.5, 0.5]}"#.utf8), to: "points/focus.json")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "o", "steps": [{"resize": {"width": 10, "height": 10, "position": "focus"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ], extra: #""allowEmpty": true, "focusPoints": "points/focus.json""#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: directory.path + "/p.json")
        #expect(scope.isRelevant(file: directory.path + "/points/focus.json"))
        #expect(!scope.isRelevant(file: directory.path + "/points/other.json"))
        #expect(scope.directoriesToWatch().contains(directory.path + "/points"))
    }
}
