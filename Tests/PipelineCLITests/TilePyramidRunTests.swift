import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Tile pyramids through the `pipeline` command: a kill at any moment leaves the old pyramid or
/// none, never a half one; `explain` names the output; a large image's pyramid is made within
/// the memory budget.
@Suite(.serialized) struct TilePyramidRunTests {
    /// Writes the pipeline file `p.json` in `directory`; its path.
    func writePipeline(_ directory: TemporaryDirectory, inputs: [String], outputs: [String], extra: String = "") throws -> String {
        try directory.write(Data(PipelineHarness.json(inputs: inputs, outputs: outputs, extra: extra).utf8), to: "p.json")
    }

    /// What is wrong with the pyramid in `out`, or nil when it is whole or absent.
    func wholeOrNone(_ out: String, sizes: [(width: Int, height: Int)]) -> String? {
        DeepZoomExpectation.problem(in: out, sizes: sizes, extension: "png")
    }

    @Test func aKilledRunLeavesTheOldPyramidOrNoneAndTheNextRunMakesItWhole() throws {
        // Given a pyramid made from one photo, then the photo replaced by a larger one
        let directory = try TemporaryDirectory()
        let first = (width: 1200, height: 900)
        let second = (width: 2400, height: 1500)
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: first.width, height: first.height)), to: "in/photo.png")
        let file = try writePipeline(
            directory, inputs: ["in/*.png"],
            outputs: [#"{"name": "zoom", "tiles": {"layout": "dz", "format": "png"}, "path": "out/{stem}.dzi"}"#])
        let out = directory.path + "/out"
        let made = try CommandRunner.run(["run", "--quiet", file])
        try #require(made.status == 0, "\(made.standardError)")
        #expect(wholeOrNone(out, sizes: [first]) == nil)
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: second.width, height: second.height)), to: "in/photo.png")

        // When runs are killed with SIGKILL at random moments of a run (seeded)
        let clock = ContinuousClock()
        let started = clock.now
        let timed = try CommandRunner.run(["run", "--quiet", "--force", file])
        try #require(timed.status == 0)
        let duration = clock.now - started
        let longest = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        var generator = SeededGenerator(seed: 20_261_126)
        for _ in 0..<12 {
            let process = try CommandRunner.start(["run", "--quiet", "--force", file])
            Thread.sleep(forTimeInterval: Double.random(in: 0...(longest * 1.1), using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // Then a .dzi, when there is one, always describes the tiles beside it, all of them
            let problem = wholeOrNone(out, sizes: [first, second])
            #expect(problem == nil, "after a kill: \(problem ?? "")")
        }

        // And one more run makes the pyramid whole and leaves nothing temporary
        let last = try CommandRunner.run(["run", "--quiet", file])
        #expect(last.status == 0, "\(last.standardError)")
        #expect(FileManager.default.fileExists(atPath: out + "/photo.dzi"))
        #expect(wholeOrNone(out, sizes: [second]) == nil)
        let entries = (try? FileManager.default.subpathsOfDirectory(atPath: out)) ?? []
        #expect(!entries.contains { $0.contains(".pipeline-tmp-") }, "\(entries.filter { $0.contains(".pipeline-tmp-") })")
    }

    @Test func explainNamesTheTilesOutput() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 640, height: 480)), to: "in/photo.jpg")
        let file = try writePipeline(
            directory, inputs: ["in/*.jpg"],
            outputs: [#"{"name": "zoom", "tiles": {"layout": "iiif3", "format": "webp", "quality": 70}, "path": "out/{stem}"}"#])
        let explain = try CommandRunner.run(["explain", file])
        #expect(explain.status == 0, "\(explain.standardError)")
        #expect(
            explain.standardOutput.contains(
                "zoom: no steps → iiif3 tiles (tiles layout=iiif3 size=512 overlap=0 .webp[Q=70,strip=true]) → out/{stem}"),
            "\(explain.standardOutput)")
        let validate = try CommandRunner.run(["validate", file])
        #expect(validate.status == 0, "\(validate.standardError)")
    }

    @Test func aTilesPipelineAndItsManifestMatchTheirSchemas() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 640, height: 480)), to: "in/photo.jpg")
        let file = try writePipeline(
            directory, inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "zoom", "tiles": {"layout": "dz", "size": 256, "overlap": 0, "format": "png"}, "path": "site/{stem}.dzi"}"#,
                #"{"name": "iiif", "tiles": {"layout": "iiif"}, "path": "site/iiif/{stem}"}"#,
            ], extra: #""manifest": {"path": "site/images.json"}"#)
        let run = try CommandRunner.run(["run", "--quiet", file])
        #expect(run.status == 0, "\(run.standardError)")
        let pipelineSchema = try directory.write(Data(try CommandRunner.run(["schema"]).standardOutput.utf8), to: "pipeline.schema.json")
        let manifestSchema = try directory.write(
            Data(try CommandRunner.run(["schema", "--manifest"]).standardOutput.utf8), to: "manifest.schema.json")
        #expect(try SchemaValidator.errorCounts(schema: pipelineSchema, documents: [file]) == [0])
        #expect(try SchemaValidator.errorCounts(schema: manifestSchema, documents: [directory.path + "/site/images.json"]) == [0])
    }

    /// A 400-megapixel image (20000×20000) made into a DeepZoom pyramid. Admission weighs the
    /// input's estimate against `--max-memory`; the kernel's limit (a memory cgroup) is set far
    /// tighter: the decoded image (held in memory, as for every output), what admission counts
    /// for the pyramid (`TileSettings.workingBytes`) and the process's reserve, with a margin
    /// well under the image. A pyramid writer that did not stream, or held more than its
    /// estimate, would be killed. `Benchmarks/tile-pyramid-memory.sh` does the same for 1.07
    /// gigapixels, too slow for the suite.
    @Test func aLargeImagesPyramidIsMadeWithinTheMemoryBudget() throws {
        guard !CommandRunner.skipsMemoryLimitTests() else { return }
        let directory = try TemporaryDirectory()
        let side = 20000
        // A flat PNG of that size is a few hundred kilobytes: the pixels exist only once decoded.
        let black = try #require(
            try Vips.call("black", ["width": .integer(side), "height": .integer(side), "bands": .integer(3)])["out"]?.image)
        try directory.write(try black.encoded(suffix: ".png[compression=1]"), to: "in/huge.png")
        let file = try writePipeline(
            directory, inputs: ["in/*.png"], outputs: [#"{"name": "zoom", "tiles": {"layout": "dz"}, "path": "out/{stem}.dzi"}"#],
            extra: #""decompress": {"maxPixels": 500000000}"#)
        let decoded = Int64(side * side * 3)
        let pyramid = TileSettings(layout: .dz).workingBytes(width: side, bands: 4)
        let kernelLimit = decoded + pyramid + MemoryBudget.reserve + 150_000_000
        guard
            let run = try CommandRunner.runInMemoryCgroup(
                limitBytes: kernelLimit, ["run", "--json", "--max-memory", "3600MB", file])
        else {
            return
        }
        #expect(run.status == 0, "\(run.output.suffix(2000))")
        let finished = run.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.last { $0["event"] as? String == "runFinished" }
        let memory = try #require(finished?["memory"] as? [String: Any])
        print(
            "20000×20000 DeepZoom pyramid in a \(kernelLimit)-byte memory cgroup: admitted \(memory["peakAdmittedBytes"] ?? "?") "
                + "of a \(memory["budgetBytes"] ?? "?")-byte budget")
        let expected = DeepZoomExpectation.tiles(width: side, height: side, size: 254, overlap: 1, extension: "jpg")
        #expect(TemporaryDirectory.files(below: directory.path + "/out/huge_files").count == expected.count)
    }
}
