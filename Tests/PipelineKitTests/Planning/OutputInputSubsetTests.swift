import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An output's `"inputs"`: it is planned, made and recorded for the inputs its globs match only.
@Suite struct OutputInputSubsetTests {
    /// Two animations and two photos, one of them in a subfolder.
    func prepare() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 60, height: 40)), to: "anim/spin.png")
        try directory.write(try Fixtures.png(try Fixtures.redCorner(width: 50, height: 30)), to: "anim/wave.png")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 80, height: 60)), to: "photos/beach.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 70, height: 50)), to: "photos/old/dune.jpg")
        return directory
    }

    /// Both outputs write `out/{stem}.webp`: only their subsets keep them from writing one file twice.
    func json(animInputs: String = #"["anim/*.png"]"#, photoInputs: String = #"["photos/**/*.{jpg,jpeg}"]"#) -> String {
        PipelineHarness.json(
            inputs: ["anim/*.png", "photos/**/*.jpg"],
            outputs: [
                #"{"name": "loop", "inputs": \#(animInputs), "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#,
                #"{"name": "still", "inputs": \#(photoInputs), "steps": [{"resize": {"width": 32}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#,
                #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "jpeg"}, "path": "thumbs/{stem}.jpg"}"#,
            ])
    }

    @Test func eachListingPlansTheOutputsWhoseGlobsMatchIt() throws {
        let directory = try prepare()
        let plan = try PipelineHarness.pipeline(json(), in: directory).plan()
        var made: [String: [String]] = [:]
        for item in plan.items {
            for listing in item.listings {
                made[listing.input.displayName] = listing.targets.filter(\.isMade).map(\.outputName)
            }
        }
        #expect(
            made == [
                "anim/spin.png": ["loop", "thumb"], "anim/wave.png": ["loop", "thumb"],
                "photos/beach.jpg": ["still", "thumb"], "photos/old/dune.jpg": ["still", "thumb"],
            ])
    }

    @Test func aRunMakesAndRecordsOnlyThoseOutputs() async throws {
        let directory = try prepare()
        let (reports, summary) = try await PipelineHarness.run(json(), in: directory)
        #expect(summary.failed == 0 && summary.outputsWritten == 8)
        #expect(
            directory.allFiles().filter { $0.hasPrefix("out/") }.sorted()
                == ["out/beach.webp", "out/dune.webp", "out/spin.webp", "out/wave.webp"])
        let beach = try #require(reports.first { $0.input.displayName == "photos/beach.jpg" })
        #expect(Set(beach.written.map(\.output)) == ["still", "thumb"])
        let image = try VipsImage.open(file: directory.url.appendingPathComponent("out/beach.webp").path)
        #expect(image.width == 32)

        // Again: every output is up to date, none made again
        let (_, again) = try await PipelineHarness.run(json(), in: directory)
        #expect(again.outputsWritten == 0 && again.outputsUpToDate == 8 && again.failed == 0, "\(again)")
    }

    @Test func theReportListsForEachInputOnlyTheOutputsMadeForIt() async throws {
        // Given a run whose outputs "loop" and "still" are each for some inputs only
        let directory = try prepare()
        let recorder = try await ReportWriterTests.record(try PipelineHarness.pipeline(json(), in: directory))
        // Then each input's entry lists the outputs made of it, all succeeded, and no other
        let report = try recorder.report
        let outputs = Dictionary(uniqueKeysWithValues: report.items.map { ($0.input, $0.outputs.map(\.name)) })
        #expect(
            outputs == [
                "anim/spin.png": ["loop", "thumb"], "anim/wave.png": ["loop", "thumb"], "photos/beach.jpg": ["still", "thumb"],
                "photos/old/dune.jpg": ["still", "thumb"],
            ], "\(outputs)")
        #expect(report.items.flatMap(\.outputs).allSatisfy { $0.status == .succeeded })
    }

    @Test func aSubsetThatMatchesNoInputIsAnErrorNamingTheOutputAndItsGlobs() throws {
        let directory = try prepare()
        do {
            _ = try PipelineHarness.pipeline(json(photoInputs: #"["pictures/*.jpg", "*.tiff"]"#), in: directory).plan()
            Issue.record("planned")
        } catch let error as PipelineFileError {
            let problem = try #require(error.problems.first { $0.path == "outputs[1].inputs" }, "\(error.problems)")
            #expect(problem.message.contains("\"still\"") && problem.message.contains("\"pictures/*.jpg\", \"*.tiff\""))
            #expect(problem.location != nil)
        }
    }

    @Test func aURLInputIsMatchedByItsURL() throws {
        let subset = try #require(InputSubset(patterns: ["https://example.com/anim/*.gif"]))
        let base = URL(fileURLWithPath: "/tmp")
        #expect(subset.contains(InputFile(url: "https://example.com/anim/a/b.gif"), baseDirectory: base, caseInsensitive: false))
        #expect(!subset.contains(InputFile(url: "https://example.com/still/b.jpg"), baseDirectory: base, caseInsensitive: false))
    }
}
