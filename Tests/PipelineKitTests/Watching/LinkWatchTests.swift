import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// A pipeline file reached through symbolic links is watched through them: an edit in place of
/// the file a link names, and a mounted Kubernetes ConfigMap's update, which renames a new
/// `..data` link over the old one.
@Suite struct LinkedPipelineFileWatchTests {
    /// The layout of a mounted ConfigMap: cfg/p.json -> ..data/p.json, ..data -> ..v1; and the
    /// next version's folder, ..v2.
    static func configMap() throws -> (directory: TemporaryDirectory, cfg: String, pipeline: Pipeline) {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "o", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#], extra: #""allowEmpty": true"#)
        for version in ["..v1", "..v2"] { try directory.write(Data(json.utf8), to: "cfg/\(version)/p.json") }
        let cfg = directory.path + "/cfg"
        try FileManager.default.createSymbolicLink(atPath: cfg + "/..data", withDestinationPath: "..v1")
        try FileManager.default.createSymbolicLink(atPath: cfg + "/p.json", withDestinationPath: "..data/p.json")
        return (directory, cfg, try PipelineHarness.pipeline(json, in: directory))
    }

    @Test func theLinksAPipelineFileIsReachedThroughAreWatched() throws {
        let (directory, cfg, pipeline) = try Self.configMap()
        defer { withExtendedLifetime(directory) {} }
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

    /// An update renames a new `..data` link over the old one; the old version's folder may stay
    /// (a layout made by hand keeps it): the rename alone is a change to the pipeline file.
    @Test func aFolderLinkRenamedOverTheOneThePipelineFileIsReachedThroughIsAChange() async throws {
        let (directory, cfg, pipeline) = try Self.configMap()
        defer { withExtendedLifetime(directory) {} }
        let watcher = try PipelineWatcher(
            pipelineFile: URL(fileURLWithPath: cfg + "/p.json"), definition: pipeline.definition,
            debounce: .init(quietPeriod: .milliseconds(200)))
        defer { watcher.stop() }
        // A bound on the wait, not on the time taken: the sequence ends if nothing comes.
        let bound = Task {
            try await Task.sleep(for: .seconds(60)); watcher.stop()
        }
        defer { bound.cancel() }
        var changes = watcher.changes.makeAsyncIterator()

        // When ..data is pointed at ..v2 as the kubelet points it, by renaming a new link over it
        try FileManager.default.createSymbolicLink(atPath: cfg + "/..data_tmp", withDestinationPath: "..v2")
        #expect(rename(cfg + "/..data_tmp", cfg + "/..data") == 0)

        // Then the batch names a path a change to the pipeline file comes through
        let batch = try #require(await changes.next())
        #expect(PipelineWatcher.changePaths(of: cfg + "/p.json").contains(where: batch.mayInclude), "\(batch)")
    }
}

/// A photo linked into an input folder is watched through the link: an edit of the file the link
/// names is a change, and so is one of a link that came after the watch started.
@Suite struct LinkedInputWatchTests {
    /// A folder `in/` whose `a.jpg` links to `photos/a.jpg`, and a pipeline reading `in/*.jpg`.
    static func linkedFolder() throws -> (directory: TemporaryDirectory, pipeline: Pipeline) {
        let directory = try TemporaryDirectory()
        try directory.write(try WatchTests.photo(), to: "photos/a.jpg")
        try directory.write(try WatchTests.photo(), to: "photos/b.jpg")
        try FileManager.default.createDirectory(atPath: directory.path + "/in", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/a.jpg", withDestinationPath: "../photos/a.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [WatchTests.small])
        try directory.write(Data(json.utf8), to: "p.json")
        return (directory, try PipelineHarness.pipeline(json, in: directory))
    }

    @Test func theFileALinkInAnInputFolderNamesIsATarget() throws {
        let (directory, pipeline) = try Self.linkedFolder()
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: directory.path + "/p.json")
        let photos = URL(fileURLWithPath: directory.path + "/photos").resolvingSymlinksInPath().path
        #expect(scope.linkedInputs == [directory.path + "/in/a.jpg"])
        #expect(scope.isRelevant(file: photos + "/a.jpg"))
        // The folder's other files are not the run's
        #expect(!scope.isRelevant(file: photos + "/b.jpg"))
        #expect(scope.directoriesToWatch().contains(photos))
    }

    @Test func anEditBehindALinkAndBehindALinkMadeSinceAreChanges() async throws {
        // Given a watcher of the linked folder
        let (directory, pipeline) = try Self.linkedFolder()
        let watcher = try PipelineWatcher(
            pipelineFile: directory.url.appendingPathComponent("p.json"), definition: pipeline.definition,
            debounce: .init(quietPeriod: .milliseconds(200)))
        defer { watcher.stop() }
        // A bound on the wait, not on the time taken: the sequence ends if nothing comes.
        let bound = Task {
            try await Task.sleep(for: .seconds(60)); watcher.stop()
        }
        defer { bound.cancel() }
        let photos = URL(fileURLWithPath: directory.path + "/photos").resolvingSymlinksInPath().path
        var changes = watcher.changes.makeAsyncIterator()

        // When the linked photo is edited in place
        try WatchTests.photo(width: 40).write(to: URL(fileURLWithPath: photos + "/a.jpg"))
        // Then that is a change
        #expect(await changes.next() == FileChanges(paths: [photos + "/a.jpg"]))

        // When a new link comes, then the photo it names is edited
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/b.jpg", withDestinationPath: "../photos/b.jpg")
        #expect(await changes.next() == FileChanges(paths: [directory.path + "/in/b.jpg"]))
        try WatchTests.photo(width: 40).write(to: URL(fileURLWithPath: photos + "/b.jpg"))
        // Then that is a change too
        #expect(await changes.next() == FileChanges(paths: [photos + "/b.jpg"]))
    }
}
