import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// An input folder whose path comes to name another folder while the watch goes: a link
/// pointed at a new release, a folder swapped for another by two renames; and a photo hard-linked
/// in, which appears whole.
@Suite struct SwappedFolderWatchTests {
    /// A watcher of `inputs` in `directory`, with a bound on the wait for its changes.
    func watching(_ directory: TemporaryDirectory, inputs: String) throws -> (PipelineWatcher, Task<Void, any Error>) {
        let json = PipelineHarness.json(inputs: [inputs], outputs: [WatchTests.small])
        try directory.write(Data(json.utf8), to: "p.json")
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let watcher = try PipelineWatcher(
            pipelineFile: directory.url.appendingPathComponent("p.json"), definition: pipeline.definition,
            debounce: .init(quietPeriod: .milliseconds(200)))
        // A bound on the wait, not on the time taken: the sequence ends if nothing comes.
        let bound = Task {
            try await Task.sleep(for: .seconds(60))
            watcher.stop()
        }
        return (watcher, bound)
    }

    /// Whether a batch of `watcher`'s changes names a path ending in `suffix` before the watch ends.
    func changesName(_ suffix: String, in watcher: PipelineWatcher) async -> Bool {
        for await batch in watcher.changes where batch.paths.contains(where: { $0.hasSuffix(suffix) }) { return true }
        return false
    }

    @Test func aLinkedInputFolderPointedElsewhereIsWatchedWhereItPointsNow() async throws {
        // Given inputs `current/*.jpg`, with current -> releases/v1
        let directory = try TemporaryDirectory()
        try directory.write(try WatchTests.photo(), to: "releases/v1/a.jpg")
        try FileManager.default.createDirectory(atPath: directory.path + "/releases/v2", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/current", withDestinationPath: "releases/v1")
        let (watcher, bound) = try watching(directory, inputs: "current/*.jpg")
        defer { watcher.stop(); bound.cancel() }

        // When the link is pointed at v2 as a release is (a new link renamed over it)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/current.new", withDestinationPath: "releases/v2")
        #expect(rename(directory.path + "/current.new", directory.path + "/current") == 0)
        try await Task.sleep(for: .milliseconds(500))
        // and a photo then comes into v2
        try directory.write(try WatchTests.photo(), to: "releases/v2/b.jpg")

        // Then it is a change: the folder the link names now is watched
        #expect(await changesName("/b.jpg", in: watcher))
    }

    @Test func anInputNamedThroughALinkPointedElsewhereIsAChange() async throws {
        // Given the input `current/a.jpg`, with current -> v1, and v2 holding another a.jpg
        let directory = try TemporaryDirectory()
        try directory.write(try WatchTests.photo(), to: "v1/a.jpg")
        try directory.write(try WatchTests.photo(width: 40), to: "v2/a.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/current", withDestinationPath: "v1")
        let (watcher, bound) = try watching(directory, inputs: "current/a.jpg")
        defer { watcher.stop(); bound.cancel() }

        // When the link is pointed at v2
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/current.new", withDestinationPath: "v2")
        #expect(rename(directory.path + "/current.new", directory.path + "/current") == 0)

        // Then that is a change: the input is another file now
        #expect(await changesName("/current", in: watcher))
    }

    /// A folder of the pipeline file's, or one below another, whose renames only that other sees.
    @Test(arguments: ["in", "site/photos"])
    func aFolderSwappedForAnotherByTwoRenamesIsWatchedAsTheNewOne(folder: String) async throws {
        // Given inputs `FOLDER/*.jpg`, and a folder beside it ready to take its place
        let directory = try TemporaryDirectory()
        let parent = (folder as NSString).deletingLastPathComponent
        let beside = { (name: String) in directory.path + "/" + (parent.isEmpty ? name : parent + "/" + name) }
        try directory.write(try WatchTests.photo(), to: "\(folder)/a.jpg")
        try directory.write(try WatchTests.photo(), to: (parent.isEmpty ? "" : parent + "/") + "next/b.jpg")
        let (watcher, bound) = try watching(directory, inputs: "\(folder)/*.jpg")
        defer { watcher.stop(); bound.cancel() }

        // When it is swapped in by two renames, at once
        #expect(rename(directory.path + "/" + folder, beside("old")) == 0)
        #expect(rename(beside("next"), directory.path + "/" + folder) == 0)
        try await Task.sleep(for: .milliseconds(500))
        // and a photo then comes into the new one
        try directory.write(try WatchTests.photo(), to: "\(folder)/c.jpg")

        // Then it is a change: the old folder's watch went with it
        #expect(await changesName("/\(folder)/c.jpg", in: watcher))
    }

    @Test func aLinkedInputFolderDeletedAndMadeAgainIsWatched() async throws {
        // Given inputs `current/*.jpg`, with current -> releases/v1
        let directory = try TemporaryDirectory()
        try directory.write(try WatchTests.photo(), to: "releases/v1/a.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/current", withDestinationPath: "releases/v1")
        let (watcher, bound) = try watching(directory, inputs: "current/*.jpg")
        defer { watcher.stop(); bound.cancel() }

        // When the release is deleted, and made again
        try FileManager.default.removeItem(atPath: directory.path + "/releases/v1")
        try await Task.sleep(for: .milliseconds(500))
        try FileManager.default.createDirectory(atPath: directory.path + "/releases/v1", withIntermediateDirectories: true)
        try await Task.sleep(for: .milliseconds(500))
        // and a photo then comes into it
        try directory.write(try WatchTests.photo(), to: "releases/v1/b.jpg")

        // Then it is a change: where the link points was watched for the folder to come back
        #expect(await changesName("/b.jpg", in: watcher))
    }

    @Test func aPhotoHardLinkedIntoAnInputFolderIsAChange() async throws {
        // Given inputs `in/*.jpg`, and a photo elsewhere
        let directory = try TemporaryDirectory()
        try directory.write(try WatchTests.photo(), to: "in/a.jpg")
        try directory.write(try WatchTests.photo(), to: "store/b.jpg")
        let (watcher, bound) = try watching(directory, inputs: "in/*.jpg")
        defer { watcher.stop(); bound.cancel() }
        var changes = watcher.changes.makeAsyncIterator()

        // When it is hard-linked in, which writes nothing and closes nothing
        #expect(link(directory.path + "/store/b.jpg", directory.path + "/in/b.jpg") == 0)

        // Then that is a change
        #expect(await changes.next() == FileChanges(paths: [directory.path + "/in/b.jpg"]))
    }

    /// A folder whose permissions change is a change: made readable again, it holds photos a run
    /// skipped while it could not read them.
    @Test func aFolderWhosePermissionsChangeIsAChange() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try WatchTests.photo(), to: "in/sub/a.jpg")
        let (watcher, bound) = try watching(directory, inputs: "in/**/*.jpg")
        defer { watcher.stop(); bound.cancel() }
        #expect(chmod(directory.path + "/in/sub", 0o700) == 0)
        #expect(await changesName("/in/sub", in: watcher))
    }
}
