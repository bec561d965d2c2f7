import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Incremental runs: only what changed is made again.
@Suite struct IncrementalTests {
    func json(quality: Int = 80, incremental: Bool = true) -> String {
        PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "small", "steps": [{"resize": {"width": 64}}], "encode": {"format": "webp", "quality": \#(quality)}, "path": "out/{stem}-small.webp"}"#,
                #"{"name": "large", "steps": [{"resize": {"width": 128}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-large.jpg"}"#,
            ], extra: #""incremental": \#(incremental)"#)
    }

    func setUp() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for index in 0..<3 {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300 + index, height: 200)), to: "in/p\(index).jpg")
        }
        return directory
    }

    func run(_ text: String, in directory: TemporaryDirectory, force: Bool = false) async throws -> RunSummary {
        let result = await (try PipelineHarness.pipeline(text, in: directory).run(force: force)).collect()
        return try #require(result.summary)
    }

    func modified(_ directory: TemporaryDirectory, _ file: String) throws -> Date? {
        try FileManager.default.attributesOfItem(atPath: directory.path + "/" + file)[.modificationDate] as? Date
    }

    @Test func anUnchangedRunMakesNothingAgain() async throws {
        let directory = try setUp()
        let first = try await run(json(), in: directory)
        #expect(first.outputsWritten == 6 && first.outputsUpToDate == 0)
        let before = try modified(directory, "out/p0-small.webp")
        let second = try await run(json(), in: directory)
        #expect(second.succeeded == 3)
        #expect(second.outputsWritten == 0 && second.outputsUpToDate == 6)
        #expect(try modified(directory, "out/p0-small.webp") == before)
    }

    @Test func anInputWithNewContentIsMadeAgain() async throws {
        let directory = try setUp()
        _ = try await run(json(), in: directory)
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 400, height: 100)), to: "in/p1.jpg")
        let second = try await run(json(), in: directory)
        #expect(second.outputsWritten == 2 && second.outputsUpToDate == 4)
    }

    /// What a run decided of an input's files, kept (the server's warm path), agrees with what
    /// the next run decides from the journal, whatever changed between them.
    @Test func aKeptVerdictAgreesWithTheNextRun() async throws {
        let directory = try setUp()
        let input = directory.path + "/in/p0.jpg", small = directory.path + "/out/p0-small.webp"
        // The verdict on a run's files, with the input's version from before it
        func verdict() async throws -> OutputJournal.Verdict {
            let before = try #require(FileStamp(path: input))
            let result = try await PipelineHarness.run(json(), in: directory)
            let report = try #require(result.reports.first { $0.input.fileName == "p0.jpg" })
            return try #require(OutputJournal.Verdict(input: before, report: report))
        }
        // Whether the next run finds the small output up to date
        func nextRunFindsItUpToDate() async throws -> Bool {
            let result = try await PipelineHarness.run(json(), in: directory)
            let report = try #require(result.reports.first { $0.input.fileName == "p0.jpg" })
            return try #require(report.written.first { $0.output == "small" }).upToDate
        }
        let unchanged = try await verdict()
        #expect(unchanged.isUpToDate(small, inputPath: input))
        #expect(try await nextRunFindsItUpToDate())

        // The input written again, with the same bytes: another version
        let changedInput = try await verdict()
        try directory.write(try Data(contentsOf: URL(fileURLWithPath: input)), to: "in/p0.jpg")
        #expect(!changedInput.isUpToDate(small, inputPath: input))
        #expect(try await !nextRunFindsItUpToDate())

        // The output written over by something else
        let changedOutput = try await verdict()
        try directory.write(Data("not the file the run made".utf8), to: "out/p0-small.webp")
        #expect(!changedOutput.isUpToDate(small, inputPath: input))
        #expect(try await !nextRunFindsItUpToDate())
    }

    @Test func aChangedOptionRemakesItsOutput() async throws {
        let directory = try setUp()
        _ = try await run(json(quality: 80), in: directory)
        let second = try await run(json(quality: 50), in: directory)
        #expect(second.outputsWritten == 3 && second.outputsUpToDate == 3)
    }

    @Test func anICCFileChangedInPlaceRemakesTheOutputsThatEmbedIt() async throws {
        // Given a run whose large output embeds an ICC file (gamma 2.2)
        let directory = try setUp()
        func profile(gamma: Double) -> Data {
            Data(ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(gamma)))
        }
        try directory.write(profile(gamma: 2.2), to: "brand.icc")
        let json = json().replacingOccurrences(of: #""format": "jpeg""#, with: #""format": "jpeg", "iccProfile": "brand.icc""#)
        _ = try await run(json, in: directory)
        #expect(try await run(json, in: directory).outputsUpToDate == 6)

        // When the file is written over with another profile (gamma 1.8)
        try directory.write(profile(gamma: 1.8), to: "brand.icc")
        let second = try await run(json, in: directory)

        // Then the outputs that embed it are made again, with the new profile, and no others
        #expect(second.outputsWritten == 3 && second.outputsUpToDate == 3)
        let embedded = try VipsImage.open(file: directory.path + "/out/p0-large.jpg").iccProfileBytes
        #expect(embedded == [UInt8](profile(gamma: 1.8)))
    }

    @Test func reorderingOutputsOrWidthsMakesNothingAgain() async throws {
        // Given a run of a thumbnail and a set of three widths
        let thumb =
            #"{"name": "thumb", "steps": [{"resize": {"width": 64}}], "encode": {"format": "webp"}, "path": "out/{stem}-thumb.webp"}"#
        func set(_ widths: String) -> String {
            #"{"name": "set", "widths": [\#(widths)], "encode": {"format": "jpeg"}, "path": "out/{stem}-{width}.jpg"}"#
        }
        let directory = try setUp()
        let first = try await run(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [thumb, set("80, 120, 160")]), in: directory)
        #expect(first.outputsWritten == 12)
        // When the outputs, and then the set's widths, are listed in another order
        let outputsReordered = try await run(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [set("80, 120, 160"), thumb]), in: directory)
        let widthsReordered = try await run(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [set("160, 80, 120"), thumb]), in: directory)
        // Then every output is up to date, as it is the same
        #expect(outputsReordered.outputsWritten == 0 && outputsReordered.outputsUpToDate == 12)
        #expect(widthsReordered.outputsWritten == 0 && widthsReordered.outputsUpToDate == 12)
        // And a width added, a first step no output had, still makes the others again
        let widthAdded = try await run(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [set("160, 80, 120, 40"), thumb]), in: directory)
        #expect(widthAdded.outputsWritten == 15)
    }

    @Test func aDeletedOrReplacedOutputIsMadeAgain() async throws {
        let directory = try setUp()
        _ = try await run(json(), in: directory)
        try FileManager.default.removeItem(atPath: directory.path + "/out/p2-large.jpg")
        try directory.write(Data("tampered".utf8), to: "out/p0-small.webp")
        let second = try await run(json(), in: directory)
        #expect(second.outputsWritten == 2 && second.outputsUpToDate == 4)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/p2-large.jpg"))
        #expect((try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/p0-small.webp"))) != Data("tampered".utf8))
    }

    @Test func forceAndIncrementalFalseMakeEverything() async throws {
        let directory = try setUp()
        _ = try await run(json(), in: directory)
        #expect(try await run(json(), in: directory, force: true).outputsWritten == 6)
        #expect(try await run(json(incremental: false), in: directory).outputsWritten == 6)
    }

    @Test func aTornJournalLineIsIgnored() async throws {
        let directory = try setUp()
        _ = try await run(json(), in: directory)
        let journal = try #require(directory.allFiles().first { $0.contains("journal-") })
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.path + "/" + journal))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"path": "/x", "fingerpr"#.utf8))
        try handle.close()
        let second = try await run(json(), in: directory)
        #expect(second.outputsUpToDate == 6)
    }

    /// Outputs whose paths hold the size: one with both `{width}` and `{height}`, one plain.
    func sizedPathsJSON(inputs: [String], extra: String = "") -> String {
        PipelineHarness.json(
            inputs: inputs,
            outputs: [
                #"{"name": "small", "steps": [{"resize": {"width": 64}}], "encode": {"format": "webp"}, "path": "out/{dir}/{stem}-{width}x{height}.webp"}"#,
                #"{"name": "large", "steps": [{"resize": {"width": 128}}], "encode": {"format": "jpeg"}, "path": "out/{dir}/{stem}-large.jpg"}"#,
            ], extra: extra)
    }

    @Test func outputsWithTheSizeInTheirPathAreUpToDateOnASecondRun() async throws {
        // Given files run once through outputs whose paths hold {width} and {height}
        let directory = try setUp()
        let text = sizedPathsJSON(inputs: ["in/*.jpg"])
        let first = try await run(text, in: directory)
        #expect(first.outputsWritten == 6)
        #expect(directory.allFiles().contains("out/p0-64x43.webp"))
        let before = try modified(directory, "out/p0-64x43.webp")

        // When the run is repeated with nothing changed
        let second = try await run(text, in: directory)

        // Then nothing is decoded or written again, and the files are left as they were
        #expect(second.outputsWritten == 0 && second.outputsUpToDate == 6)
        #expect(try modified(directory, "out/p0-64x43.webp") == before)
    }

    @Test func remoteOutputsWithTheSizeInTheirPathAreUpToDateOnASecondRun() async throws {
        // Given a URL with an ETag, run once through outputs whose paths hold {width} and {height}
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100))
        let server = try TestHTTPServer { request, _ in
            if request.headers["if-none-match"] == "\"v1\"" { return .init(status: 304, headers: ["ETag": "\"v1\""]) }
            return .init(status: 200, headers: ["ETag": "\"v1\""], body: photo)
        }
        let directory = try TemporaryDirectory()
        let text = sizedPathsJSON(inputs: [server.url("/img/cat.jpg")], extra: #""cache": {"directory": "cache"}"#)
        let first = try await run(text, in: directory)
        #expect(first.outputsWritten == 2, "\(first)")
        #expect(directory.allFiles().contains("out/127.0.0.1_\(server.port)/img/cat-64x32.webp"))

        // When the run is repeated with nothing changed on the server
        let second = try await run(text, in: directory)

        // Then both outputs are up to date and none is written
        #expect(second.outputsWritten == 0 && second.outputsUpToDate == 2)
        #expect(server.requests(for: "/img/cat.jpg").count == 2)
    }
}
