import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The library's watcher of a pipeline: which changes it delivers, how it gathers a burst into
/// one batch, and which files and folders matter to it.
@Suite struct WatchTests {
    static let small =
        #"{"name": "small", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#

    /// A folder with `count` small photos in `in/`, one more in `spare/` to copy in, and a
    /// pipeline file `p.json` making `outputs` of `in/*.jpg`.
    func setUp(inputs count: Int, outputs: [String] = [small], inputPattern: String = "in/*.jpg") throws -> TemporaryDirectory {
        try Fixtures.watchedFolder(inputs: count, outputs: outputs, inputPattern: inputPattern)
    }

    static func photo(width: Int = 48, height: Int = 32) throws -> Data {
        try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height))
    }

    // MARK: The library's watcher

    @Test func theWatcherDeliversInputChangesButNotWhatARunWrites() async throws {
        // Given a watcher of a pipeline reading in/*.jpg and writing out/{stem}-small.webp
        let directory = try setUp(inputs: 1)
        let file = directory.url.appendingPathComponent("p.json")
        let pipeline = try Pipeline(contentsOf: file, processors: .standard)
        let watcher = try PipelineWatcher(
            pipelineFile: file, definition: pipeline.definition,
            debounce: .init(quietPeriod: .milliseconds(300)))
        defer { watcher.stop() }
        // A bound on the wait, not on the time taken: the sequence ends if nothing comes.
        let bound = Task {
            try await Task.sleep(for: .seconds(60)); watcher.stop()
        }
        defer { bound.cancel() }

        // When a run's kinds of files appear (an output, a temporary file, the cache's journal,
        // a file no glob matches) beside one new input
        try directory.write(Data("x".utf8), to: "out/p0-small.webp")
        try directory.write(Data("x".utf8), to: "in/.p9.jpg.pipeline-tmp-1-2")
        try directory.write(Data("x".utf8), to: ".pipeline-cache/journal-1.jsonl")
        try directory.write(Data("x".utf8), to: "in/notes.txt")
        try directory.write(try Self.photo(), to: "in/new.jpg")

        // Then the batch holds the input alone
        var changes = watcher.changes.makeAsyncIterator()
        let batch = await changes.next()
        #expect(batch == FileChanges(paths: [directory.path + "/in/new.jpg"]))
    }

    // MARK: Debouncing

    @Test func aBurstIsOneBatchOnceItHasBeenQuietForThePeriod() {
        var debouncer = ChangeDebouncer(quietPeriod: .milliseconds(300), longestWait: .seconds(5))
        let start = ContinuousClock.now
        // 100 changes 10 ms apart, one path twice
        for index in 0..<100 { debouncer.record("/in/\(index).jpg", at: start + .milliseconds(10 * index)) }
        debouncer.record("/in/5.jpg", at: start + .milliseconds(995))
        let last = start + .milliseconds(995)

        #expect(debouncer.takeIfDue(at: last + .milliseconds(299)) == nil)
        let batch = debouncer.takeIfDue(at: last + .milliseconds(300))
        #expect(batch?.count == 100)
        #expect(batch?.paths.first == "/in/0.jpg")
        #expect(!debouncer.isPending && debouncer.takeIfDue(at: last + .seconds(10)) == nil)
    }

    @Test func aStreamThatNeverGoesQuietIsCutAtTheLongestWait() {
        var debouncer = ChangeDebouncer(quietPeriod: .milliseconds(300), longestWait: .seconds(5))
        let start = ContinuousClock.now
        // A change every 100 ms for 6 s: never quiet for 300 ms
        var batches: [FileChanges] = []
        for tick in 0..<60 {
            let now = start + .milliseconds(100 * tick)
            if let batch = debouncer.takeIfDue(at: now) { batches.append(batch) }
            debouncer.record("/in/\(tick).jpg", at: now)
        }
        // Then the first 5 s of it are one batch, and the rest waits for quiet (or its own 5 s)
        #expect(batches.count == 1)
        #expect(batches.first?.count == 50)
        #expect(debouncer.dueTime == start + .milliseconds(5900) + .milliseconds(300))
    }

    @Test func anOverflowIsAChangeOfAnything() {
        var debouncer = ChangeDebouncer(quietPeriod: .milliseconds(300), longestWait: .seconds(5))
        let start = ContinuousClock.now
        debouncer.recordOverflow(at: start)
        let batch = debouncer.takeIfDue(at: start + .seconds(1))
        #expect(batch?.count == 1)
        #expect(batch?.mayInclude("/any/p.json") == true)
    }

    // MARK: What matters

    @Test func theScopeMatchesInputsListsAndOverlaysButNotOutputsTemporariesOrTheCache() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 4, height: 4)), to: "art/logo.png")
        try directory.write(Data("more/a.jpg\nhttps://example.org/b.jpg\n".utf8), to: "lists/urls.txt")
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg", "single.png", "https://example.org/c.jpg"],
            outputs: [
                #"{"name": "o", "steps": [{"composite": {"image": "art/logo.png"}}], "encode": {"format": "jpeg"}, "path": "in/out/{dir}/{stem}-o.jpg"}"#
            ], extra: #""allowEmpty": true, "cache": {"directory": "cache"}"#
        ).replacingOccurrences(of: #""single.png""#, with: #""single.png", {"list": "lists/urls.txt"}"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let base = directory.path
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: base + "/p.json")

        for relevant in ["p.json", "in/a.jpg", "in/x/y/b.jpg", "single.png", "lists/urls.txt", "lists/more/a.jpg", "art/logo.png"] {
            #expect(scope.isRelevant(file: base + "/" + relevant), "\(relevant)")
        }
        for ignored in [
            "in/a.png", "in/.hidden/b.jpg", "in/out/a-o.jpg", "in/out/x/y/a-o.jpg", "in/.a.jpg.pipeline-tmp-12-ab",
            "cache/journal-1.jsonl", "other.json", "single.jpg",
        ] {
            #expect(!scope.isRelevant(file: base + "/" + ignored), "\(ignored)")
        }
        // Folders: the pipeline's own (for p.json and single.png) and the one holding it (which sees
        // it swapped for another), the lists', the art's, and in/ with its subfolders; missing ones
        // through their nearest existing ancestor
        try FileManager.default.createDirectory(atPath: base + "/in/x/y", withIntermediateDirectories: true)
        let parent = (base as NSString).deletingLastPathComponent
        #expect(
            scope.directoriesToWatch() == [parent, base, base + "/art", base + "/lists", base + "/in", base + "/in/x", base + "/in/x/y"])
    }

    /// Brace sets and "caseInsensitive" widen what a watcher cares about as they widen the inputs.
    @Test func theScopeFollowsBraceSetsAndCase() throws {
        let directory = try TemporaryDirectory()
        let output = #"{"name": "o", "encode": {"format": "jpeg"}, "path": "out/{dir}/{stem}-o.jpg"}"#
        let base = directory.path
        let braces = WatchScope(
            definition: try PipelineHarness.pipeline(
                PipelineHarness.json(inputs: ["{photos,scans}/**/*.{jpg,png}"], outputs: [output], extra: #""allowEmpty": true"#),
                in: directory
            ).definition,
            pipelineFile: base + "/p.json")
        for relevant in ["photos/a.jpg", "photos/x/b.png", "scans/c.png"] {
            #expect(braces.isRelevant(file: base + "/" + relevant), "\(relevant)")
        }
        for ignored in ["photos/a.gif", "other/a.jpg", "photos/A.JPG"] {
            #expect(!braces.isRelevant(file: base + "/" + ignored), "\(ignored)")
        }
        let folded = WatchScope(
            definition: try PipelineHarness.pipeline(
                PipelineHarness.json(inputs: ["photos/*.jpg"], outputs: [output], extra: #""allowEmpty": true, "caseInsensitive": true"#),
                in: directory
            ).definition,
            pipelineFile: base + "/p.json")
        #expect(folded.isRelevant(file: base + "/photos/A.JPG") && folded.isRelevant(file: base + "/photos/b.jpg"))
        #expect(!folded.isRelevant(file: base + "/photos/b.png"))
    }
}
