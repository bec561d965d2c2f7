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

/// A pipeline file reached through symbolic links is watched through them: an edit in place of
/// the file a link names, and a mounted Kubernetes ConfigMap's update, which renames a new
/// `..data` link over the old one.
@Suite struct LinkedPipelineFileWatchTests {
    @Test func theLinksAPipelineFileIsReachedThroughAreWatched() throws {
        // Given the layout of a mounted ConfigMap: cfg/p.json -> ..data/p.json, ..data -> ..v1
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "o", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#], extra: #""allowEmpty": true"#)
        try directory.write(Data(json.utf8), to: "cfg/..v1/p.json")
        let cfg = directory.path + "/cfg"
        try FileManager.default.createSymbolicLink(atPath: cfg + "/..data", withDestinationPath: "..v1")
        try FileManager.default.createSymbolicLink(atPath: cfg + "/p.json", withDestinationPath: "..data/p.json")
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        // Then the link, the folder link an update replaces, and the file itself are watched
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: cfg + "/p.json")
        let real = URL(fileURLWithPath: cfg + "/..v1").resolvingSymlinksInPath().path + "/p.json"
        for path in [cfg + "/p.json", cfg + "/..data", real] {
            #expect(scope.isRelevant(file: path), "\(path)")
            #expect(PipelineWatcher.changePaths(of: cfg + "/p.json").contains(path), "\(path)")
        }
        #expect(!scope.isRelevant(file: cfg + "/..v1/other.json"))
        #expect(scope.directoriesToWatch().isSuperset(of: [cfg, (real as NSString).deletingLastPathComponent]))
        // and a file that is no link is the one path
        #expect(PipelineWatcher.changePaths(of: real) == [real])
    }
}
