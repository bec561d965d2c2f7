import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// While a pipeline file fails, the watcher also watches what may mend it: the folders the file
/// reads as it is now, and the files its problems are about.
@Suite struct AwaitedWatchTests {
    static let output = #"{"name": "o", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#

    /// A folder whose `p.json` reads `pattern` (and may find nothing), and a watcher of it that
    /// stops after 30 s: a bound on the wait, not on the time taken, so the batches end if none comes.
    func watched(_ pattern: String) throws -> (TemporaryDirectory, Pipeline, PipelineWatcher) {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output], inputPattern: "in/*.jpg")
        try directory.write(
            Data(PipelineHarness.json(inputs: [pattern], outputs: [Self.output], extra: #""allowEmpty": true"#).utf8), to: "p.json")
        let file = directory.url.appendingPathComponent("p.json")
        let pipeline = try Pipeline(contentsOf: file, processors: .standard)
        let watcher = try PipelineWatcher(
            pipelineFile: file, definition: pipeline.definition, debounce: .init(quietPeriod: .milliseconds(100)))
        Task {
            try await Task.sleep(for: .seconds(30)); watcher.stop()
        }
        return (directory, pipeline, watcher)
    }

    @Test func whatMendsAFailedFileIsSeenEvenWhenItCameBeforeItsFoldersWereWatched() async throws {
        // Given a watcher of in/*.jpg, and a consumer already waiting for a batch
        let (directory, pipeline, watcher) = try watched("in/*.jpg")
        defer { watcher.stop() }
        let next = Task {
            var changes = watcher.changes.makeAsyncIterator()
            return await changes.next()
        }
        try await Task.sleep(for: .milliseconds(300))

        // When the file was edited to read later/*.jpg and lay marks/logo.png over each, neither
        // there, and both come before the watcher is told
        let edited = PipelineHarness.json(
            inputs: ["later/*.jpg"],
            outputs: [Self.output], extra: #""allowEmpty": true"#)
        let failed = try PipelineDefinition(json: edited, baseDirectory: directory.url, processors: .standard)
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 8, height: 8)), to: "later/photo.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "marks/logo.png")
        watcher.watch(pipeline.definition, awaiting: failed, filesAtFault: [directory.path + "/marks/logo.png"])

        // Then their folders are the next batch
        let batch = await next.value
        #expect(Set(batch?.paths ?? []) == [directory.path + "/later", directory.path + "/marks"], "\(String(describing: batch))")
    }

    @Test func aFolderAGlobReadsThatArrivesAsASymbolicLinkIsSeen() async throws {
        // Given a watcher of a pipeline reading new/*.jpg, with no folder new yet
        let (directory, _, watcher) = try watched("new/*.jpg")
        defer { watcher.stop() }

        // When a folder holding a photo is linked in at new
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 8, height: 8)), to: "src/photo.jpg")
        #expect(symlink("src", directory.path + "/new") == 0)

        // Then it is the next batch
        var changes = watcher.changes.makeAsyncIterator()
        let batch = await changes.next()
        #expect(batch?.paths == [directory.path + "/new"], "\(String(describing: batch))")
    }

    @Test func aFolderOnlyOnTheWayToWhatAFailedFileReadsIsNotLookedInto() async throws {
        // Given a failed file reading a folder not made yet below one that holds other files
        let directory = try Fixtures.watchedFolder(
            inputs: 1, outputs: [Self.output], inputPattern: "in/*.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 8, height: 8)), to: "deep/photo.jpg")
        let edited = PipelineHarness.json(
            inputs: ["deep/later/*.jpg", "deep/*.png"],
            outputs: [Self.output], extra: #""allowEmpty": true"#)
        let failed = try PipelineDefinition(json: edited, baseDirectory: directory.url, processors: .standard)
        let scopes = WatchedPipeline(
            definition: try Pipeline(contentsOf: directory.url.appendingPathComponent("p.json"), processors: .standard).definition,
            failed: failed
        ).scopes(pipelineFile: directory.path + "/p.json")

        // Then its entries are looked at, not what is below them, and only what the file reads matters
        let start = Date()
        #expect(scopes.directoriesToWatch().contains(directory.path + "/deep"))
        #expect(!scopes.holdsRelevantEntries(directory: directory.path + "/deep", changedSince: start))
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "deep/new.png")
        #expect(scopes.holdsRelevantEntries(directory: directory.path + "/deep", changedSince: start))
        // and only what changed since: a file that was there when the file failed mends nothing
        #expect(!scopes.holdsRelevantEntries(directory: directory.path + "/deep", changedSince: Date().addingTimeInterval(5)))
        #expect(scopes.isRelevant(file: directory.path + "/deep/later/a.jpg"))
        #expect(!scopes.isRelevant(file: directory.path + "/deep/a.jpg"))
    }
}
