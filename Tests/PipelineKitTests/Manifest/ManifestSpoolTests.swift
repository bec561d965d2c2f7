import Foundation
import StandardProcessors
import Testing
import Vips

@testable import PipelineKit

/// A run keeps its manifest's entries on disk as it makes them and writes the manifest at its
/// end from there: the same bytes `ImageManifest.jsonData()` gives, and the previous manifest's
/// placeholders found on disk too.
@Suite struct ManifestSpoolTests {
    func input(_ source: String, width: Int) -> ImageManifest.Input {
        let file = ImageManifest.File(
            url: "/img/" + source, path: source, width: width, height: width / 2, bytes: width * 10, format: "webp",
            mimeType: "image/webp", quality: width == 7 ? 61 : nil, ssimulacra2: width == 7 ? 80.5 : nil)
        return ImageManifest.Input(
            source: source, width: width * 3, height: width,
            outputs: [
                "photo": .init(
                    formats: [.init(format: "webp", mimeType: "image/webp", files: [file])],
                    placeholders: Placeholders(
                        lqip: "data:image/webp;base64,AAAA", blurhash: nil, thumbhash: nil, dominantColor: "#102030"),
                    placeholdersFrom: "0123456789abcdef 42"),
                "tiles": .init(
                    formats: [], placeholders: nil,
                    tiles: .init(
                        layout: "dz", url: "/img/t.dzi", path: "t.dzi", width: 9, height: 9, tileSize: 254, overlap: 1, format: "jpeg",
                        mimeType: "image/jpeg", bytes: 99)),
            ])
    }

    /// Sources that sort in several ways and need escaping: a quote, a backslash, a slash,
    /// accents in both encodings, a line break.
    let sources = [
        "in/b.jpg", "in/a b.jpg", "in/\"quoted\".jpg", "in/back\\slash.png", "https://example.com/x?y=1&z=%20", "in/caf\u{e9}.jpg",
        "in/cafe\u{301}.jpg", "in/line\nbreak.jpg", "in/\u{1F600}.jpg", "in/A.jpg",
    ]

    @Test func theManifestIsTheBytesJSONDataGivesWhateverTheOrderEntriesCameIn() throws {
        // Given entries kept in an order other than the sources'
        let directory = try TemporaryDirectory()
        let spool = try ManifestSpool(folder: directory.url.path)
        let entries = sources.enumerated().map { input($0.element, width: $0.offset + 3) }
        for entry in entries.reversed() { try spool.append(source: entry.source, text: ManifestSpool.entryText(entry)) }
        // When the manifest is written
        let path = directory.url.appendingPathComponent("m.json").path
        try spool.writeManifest(pipeline: "name with \"quotes\" / slash", to: path)
        // Then it is, byte for byte, the manifest of those entries
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        let expected = try ImageManifest(pipeline: "name with \"quotes\" / slash", inputs: entries).jsonData()
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(
            try ImageManifest.read(from: URL(fileURLWithPath: path)).inputs.map(\.source) == sources.sorted(by: ImageManifest.sortsBefore))
        // And nothing but the manifest is left in the folder (the spool was never a name there)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["m.json"])
    }

    @Test func anEmptyManifestIsTheBytesJSONDataGives() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("m.json").path
        try ManifestSpool(folder: directory.url.path).writeManifest(pipeline: "p", to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == ImageManifest(pipeline: "p", inputs: []).jsonData())
    }

    @Test func aPreviousManifestsEntriesAreFoundBySource() throws {
        // Given a manifest written by jsonData()
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("m.json")
        let entries = sources.enumerated().map { input($0.element, width: $0.offset + 3) }
        try ImageManifest(pipeline: "p", inputs: entries).jsonData().write(to: url)
        // Then each entry is found by its source, as it was written
        let previous = try #require(PreviousManifest(path: url.path))
        for entry in entries { #expect(previous.entry(for: entry.source) == entry, "\(entry.source)") }
        // And a source it does not name, or names only as part of another, has no entry
        #expect(previous.entry(for: "in/c.jpg") == nil)
        #expect(previous.entry(for: "b.jpg") == nil)
        // And a manifest laid out otherwise (edited by hand, on one line) gives no entries
        let encoder = JSONEncoder()
        try encoder.encode(ImageManifest(pipeline: "p", inputs: entries)).write(to: url)
        let compact = try #require(PreviousManifest(path: url.path))
        #expect(compact.entry(for: "in/b.jpg") == nil)
        // And there is nothing to read where there is no manifest
        #expect(PreviousManifest(path: directory.url.appendingPathComponent("none.json").path) == nil)
    }

    @Test func aPreviousManifestsEntriesAreReadAsTheFileHasThem() throws {
        // Given a manifest written by jsonData(), with sources that need escaping
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("m.json")
        let entries = sources.enumerated().map { input($0.element, width: $0.offset + 3) }
        try ImageManifest(pipeline: "p", inputs: entries).jsonData().write(to: url)
        // When its entries are read without decoding them
        var read: [(source: String, text: Data)] = []
        try #require(PreviousManifest(path: url.path)).forEachEntryText { read.append(($0, $1)) }
        // Then each comes with its source, in the manifest's order, and its text is the one a
        // spool keeps for it: a manifest written from them is the same bytes
        let sorted = entries.sorted { ImageManifest.sortsBefore($0.source, $1.source) }
        #expect(read.map(\.source) == sorted.map(\.source))
        for (entry, kept) in zip(sorted, read) { #expect(kept.text == (try ManifestSpool.entryText(entry)), "\(entry.source)") }
        let spool = try ManifestSpool(folder: directory.url.path)
        for kept in read.reversed() { try spool.append(source: kept.source, text: kept.text) }
        let copy = directory.url.appendingPathComponent("copy.json")
        try spool.writeManifest(pipeline: "p", to: copy.path)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: url))
    }

    @Test func runsOfPartsOfAPlanKeepEachOthersEntries() async throws {
        // Given a manifest of three photos made by a whole run
        let (directory, json) = try Self.photos(3, placeholders: #""dominantColor""#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let (_, first) = await pipeline.run(try pipeline.plan()).collect()
        #expect(first?.succeeded == 3)
        let manifest = directory.url.appendingPathComponent("site/images.json")
        // When two photos change and a run of each alone starts before either has written it
        for index in 0..<2 {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 90 + index, height: 60)), to: "in/p\(index).jpg")
        }
        let plan = try pipeline.plan()
        let runs = (0..<2).map { index in pipeline.run(plan.keeping { $0.input.displayName == "in/p\(index).jpg" }) }
        for run in runs { #expect(await run.collect().summary?.succeeded == 1) }
        // Then the manifest has both new sizes and the third photo's entry as it was
        let widths = try ImageManifest.read(from: manifest).inputs.map { ($0.source, $0.width) }
        #expect(widths.map(\.0) == ["in/p0.jpg", "in/p1.jpg", "in/p2.jpg"])
        #expect(widths.map(\.1) == [90, 91, 202])
    }

    @Test func runsOfPartsThatEndDuringAWriteAreWrittenTogetherTheLaterEntryStanding() async throws {
        // Given a manifest of three photos made by a whole run
        let (directory, json) = try Self.photos(3, placeholders: #""dominantColor""#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        #expect(await pipeline.run(try pipeline.plan()).collect().summary?.succeeded == 3)
        let manifest = directory.url.appendingPathComponent("site/images.json")
        let waiting = { ManifestWriter.waiting.withLock { $0[manifest.path]?.count ?? 0 } }
        // While another manifest write holds the lane
        let release = try await Self.holdingTheLane()
        defer { release.withLock { $0 = true } }
        // When p0 changes and its run ends, p0 changes again and its second run ends, then p1
        // changes and its run ends
        var runs: [PipelineRun] = []
        for (index, width) in [(0, 90), (0, 95), (1, 91)] {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: width, height: 60)), to: "in/p\(index).jpg")
            runs.append(pipeline.run(try pipeline.plan().keeping { $0.input.displayName == "in/p\(index).jpg" }))
            try await waitUntil("run \(runs.count) comes to write its manifest") { waiting() == runs.count }
        }
        let writes = { ManifestWriter.writesOfParts.withLock { $0[manifest.path] ?? 0 } }
        let writesBefore = writes()
        release.withLock { $0 = true }
        for run in runs { #expect(await run.collect().summary?.succeeded == 1) }
        // Then one write took all three, the later of p0's entries standing, and p2's kept
        #expect(writes() == writesBefore + 1)
        let widths = try ImageManifest.read(from: manifest).inputs.map { ($0.source, $0.width) }
        #expect(widths.map(\.0) == ["in/p0.jpg", "in/p1.jpg", "in/p2.jpg"])
        #expect(widths.map(\.1) == [95, 91, 202])
    }

    @Test func aRunOfPartWritesTheManifestOnlyWhileNoOtherProcessHoldsItsFolder() async throws {
        // Given a manifest of two photos made by a whole run
        let (directory, json) = try Self.photos(2, placeholders: #""dominantColor""#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        #expect(await pipeline.run(try pipeline.plan()).collect().summary?.succeeded == 2)
        let manifest = directory.url.appendingPathComponent("site/images.json")
        let waiting = { ManifestWriter.waiting.withLock { $0[manifest.path]?.count ?? 0 } }
        // And a run of p0, changed, that comes to write while the lane is held
        let release = try await Self.holdingTheLane()
        defer { release.withLock { $0 = true } }
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 90, height: 60)), to: "in/p0.jpg")
        let run = pipeline.run(try pipeline.plan().keeping { $0.input.displayName == "in/p0.jpg" })
        try await waitUntil("the run comes to write its manifest") { waiting() == 1 }
        // When another process (another replica on the volume) holds the manifest folder's lock
        // as the lane takes the run's write
        let folder = open(manifest.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY)
        #expect(folder >= 0 && flock(folder, LOCK_EX) == 0)
        release.withLock { $0 = true }
        try await waitUntil("the lane takes the run's write") { waiting() == 0 }
        // Then the manifest is not written until the lock is let go
        try await Task.sleep(for: .milliseconds(500))
        #expect(try ImageManifest.read(from: manifest).inputs.map(\.width) == [200, 201])
        flock(folder, LOCK_UN)
        close(folder)
        #expect(await run.collect().summary?.succeeded == 1)
        #expect(try ImageManifest.read(from: manifest).inputs.map(\.width) == [90, 201])
    }

    /// Holds the manifest lane, as another write would, until the flag it gives is set (or for
    /// two minutes at most).
    static func holdingTheLane() async throws -> Locked<Bool> {
        let holding = Locked(false)
        let release = Locked(false)
        ManifestWriter.lane.async {
            holding.withLock { $0 = true }
            let deadline = Date() + 120
            while !release.withLock({ $0 }), Date() < deadline { usleep(2_000) }
        }
        try await waitUntil("the manifest lane is held") { holding.withLock { $0 } }
        return release
    }

    /// `count` photos of noise in `in/` (`p0.jpg`, 200 pixels wide, `p1.jpg` 201, …), and a
    /// pipeline file making a 48 px JPEG of each with `placeholders` (JSON strings) for a
    /// manifest at `site/images.json`.
    static func photos(_ count: Int, placeholders: String) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        for index in 0..<count {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 200 + index, height: 150)), to: "in/p\(index).jpg")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 48}}], "encode": {"format": "jpeg", "quality": 80}, "#
                    + #""path": "out/{stem}.jpg", "placeholders": [\#(placeholders)]}"#
            ], extra: #""manifest": {"path": "site/images.json"}, "cache": {"directory": "cache"}"#)
        return (directory, json)
    }

    @Test func placeholdersOfUnchangedFilesComeFromThePreviousManifest() async throws {
        // Given six photos made with a manifest and its placeholders
        let (directory, json) = try Self.photos(6, placeholders: #""lqip", "dominantColor""#)
        let (_, first) = try await PipelineHarness.run(json, in: directory)
        #expect(first.succeeded == 6)
        let manifestURL = directory.url.appendingPathComponent("site/images.json")
        let made = try ImageManifest.read(from: manifestURL)
        #expect(made.inputs.count == 6)
        #expect(made.inputs.allSatisfy { $0.outputs["t"]?.placeholders?.lqip?.hasPrefix("data:image/webp;base64,") == true })
        // When the manifest's placeholders are marked (its layout kept) and the run is made again
        let text = try String(contentsOf: manifestURL, encoding: .utf8)
        try text.replacingOccurrences(of: "data:image/webp;base64,", with: "data:kept,").write(
            to: manifestURL, atomically: true, encoding: .utf8)
        let (_, again) = try await PipelineHarness.run(json, in: directory)
        #expect(again.outputsUpToDate == 6, "the second run made something again: the test proves nothing")
        // Then every placeholder is the previous manifest's, found on disk
        let kept = try ImageManifest.read(from: manifestURL)
        #expect(kept.inputs.count == 6)
        for entry in kept.inputs { #expect(entry.outputs["t"]?.placeholders?.lqip?.hasPrefix("data:kept,") == true, "\(entry.source)") }
        // And the manifest is what jsonData() gives for it
        #expect(try Data(contentsOf: manifestURL) == kept.jsonData())
    }
}

/// A run of a few sources of a plan (what `pipeline serve` starts for a request) updates their
/// entries in the manifest and keeps the others.
@Suite struct PartialRunManifestTests {
    @Test func aRunOfOneSourceKeepsTheOtherEntries() async throws {
        // Given four photos made with a manifest
        let (directory, json) = try ManifestSpoolTests.photos(4, placeholders: #""dominantColor""#)
        let (_, first) = try await PipelineHarness.run(json, in: directory)
        #expect(first.succeeded == 4)
        let manifestURL = directory.url.appendingPathComponent("site/images.json")
        let before = try ImageManifest.read(from: manifestURL)
        #expect(before.inputs.count == 4)
        // When one of them changes and a run is made of it alone, as a server makes one
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 260, height: 150)), to: "in/p2.jpg")
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let plan = try pipeline.plan().keeping { $0.input.path.hasSuffix("/p2.jpg") }
        #expect(plan.items.count == 1)
        let (reports, summary) = await pipeline.run(plan).collect()
        #expect(reports.count == 1 && summary?.outputsWritten == 1 && summary?.manifestProblem == nil)
        // Then the manifest has all four, the one made again with its new size
        let after = try ImageManifest.read(from: manifestURL)
        #expect(after.inputs.map(\.source) == before.inputs.map(\.source))
        for (old, new) in zip(before.inputs, after.inputs) {
            if old.source.hasSuffix("p2.jpg") {
                #expect(new.width == 260 && old.width == 202)
            } else {
                #expect(new == old, "\(old.source)")
            }
        }
        #expect(try Data(contentsOf: manifestURL) == after.jsonData())
    }
}
