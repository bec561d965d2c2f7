import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// `pipeline explain`: the plan from headers only, on a known folder.
@Suite struct ExplainTests {
    @Test func explainsInputsFormatsDecodeScaleAndMemory() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1000)), to: "in/a.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 800, height: 600)), to: "in/b.png")
        try directory.write(Data("junk".utf8), to: "in/c.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#
            ], extra: #""inFlight": 3"#)
        let explanation = try PipelineHarness.pipeline(json, in: directory).explain()
        #expect(explanation.inputs == 3)
        #expect(explanation.formats == ["jpeg": 1, "png": 1])
        let jpeg = try #require(explanation.samples.first { $0.input == "in/a.jpg" })
        #expect(jpeg.size == ImageSize(width: 2000, height: 1000))
        #expect(jpeg.loadShrink == 8)
        #expect(jpeg.decodeSize == ImageSize(width: 200, height: 100))
        let png = try #require(explanation.samples.first { $0.input == "in/b.png" })
        #expect(png.loadShrink == 1 && png.decodeSize == ImageSize(width: 200, height: 150))
        #expect(explanation.samples.first { $0.input == "in/c.jpg" }?.format == nil)
        // 3 in flight × ((200×150 decoded + 200×150 output) × 4 bytes + the lossy WebP encoder's 11 bytes a pixel)
        #expect(explanation.estimatedPeakImageBytes == 3 * ((30_000 + 30_000) * 4 + 30_000 * 11))
        #expect(explanation.text.contains("in flight: at most 3 inputs"))
        #expect(explanation.text.contains("in/a.jpg: jpeg 2000×1000, shrink-on-load 8, decoded at 200×100"))
        // Nothing was written: explain does not run.
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func anInputOverMaxPixelsIsShownAsRefused() throws {
        // Given an input of 2,000,000 pixels and a limit of a million
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1000)), to: "in/a.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/b.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            extra: #""decompress": {"maxPixels": 1000000}"#)
        // When it is explained
        let text = try PipelineHarness.pipeline(json, in: directory).explain().text
        // Then the run's refusal is said, not a decode the run will not make
        #expect(text.contains("in/a.jpg: jpeg 2000×1000: refused, more than decompress.maxPixels (1000000)"), "\(text)")
        #expect(text.contains("in/b.jpg: jpeg 40×30, decoded at 40×30"), "\(text)")
    }

    @Test func inputsBeyondThoseShownAreCountedAndATargetShowsNoQuality() throws {
        // Given seven inputs and an output whose quality is searched
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30))
        for index in 0..<7 { try directory.write(photo, to: "in/p\(index).jpg") }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "t", "encode": {"format": "webp", "quality": {"ssimulacra2": 75}}, "path": "out/{stem}.webp"}"#])
        // When it is explained, five at most shown
        let text = try PipelineHarness.pipeline(json, in: directory).explain().text
        // Then the rest are counted, and the quality is the search's, not the default's
        #expect(text.contains("  … and 2 more\n"), "\(text)")
        #expect(text.contains(".webp[Q=searched,"), "\(text)")
        #expect(!text.contains("Q=80"), "\(text)")
        #expect(text.contains("searches quality for SSIMULACRA2 75"), "\(text)")
    }

    /// What an output keeps is shown for every setting, `all` (which publishes camera and place)
    /// too; and remote inputs, whose headers explain does not fetch, are said to be outside the bound.
    @Test func keepingEverythingAndRemoteInputsAreSaid() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/a.jpg")
        let outputs = [#""all""#, #""none""#, #"["exif"]"#].enumerated().map { index, keep in
            #"{"name": "k\#(index)", "encode": {"format": "jpeg", "keep": \#(keep)}, "path": "out/\#(index)/{stem}.jpg"}"#
        }
        let local = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs), in: directory).explain()
        #expect(local.text.contains("jpeg (.jpg[Q=80,interlace=false] keep=all)"), "\(local.text)")
        #expect(local.text.contains("strip=true") && local.text.contains("keep=exif"), "\(local.text)")
        #expect(!local.text.contains("remote input"))
        let remote = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["in/*.jpg", "http://127.0.0.1:9/b.jpg"], outputs: outputs), in: directory
        ).explain()
        #expect(remote.text.contains("not counting the 1 remote input: explain fetches none"), "\(remote.text)")
        // and when every input is remote, no bound is given as if it were known
        let allRemote = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["http://127.0.0.1:9/b.jpg"], outputs: outputs), in: directory
        ).explain()
        #expect(allRemote.text.contains("image memory, upper bound: not known: the inputs are remote"), "\(allRemote.text)")
        #expect(!allRemote.text.contains("upper bound: 0 MB") && !allRemote.text.contains("not counting"), "\(allRemote.text)")
    }

    /// A file the run refuses from its header (more pixels than `maxPixels`) holds nothing: it
    /// is no "largest input" for the bound.
    @Test func aFileOverMaxPixelsAddsNothingToTheMemoryBound() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 100, height: 75)), to: "in/small.png")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [#"{"name": "t", "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#])
        let alone = try PipelineHarness.pipeline(json, in: directory).explain()
        // When a file declaring 65535 × 65535 pixels is put beside it
        try directory.write(try HostileFixtures.gifDeclaring(width: 65535, height: 65535), to: "in/bomb.gif")
        let beside = try PipelineHarness.pipeline(json, in: directory).explain()
        // Then it is shown refused, and the bound is the small file's alone
        #expect(beside.text.contains("refused, more than decompress.maxPixels"), "\(beside.text)")
        #expect(beside.imageMemoryBound == alone.imageMemoryBound)
        #expect(beside.largestInputEstimate == alone.largestInputEstimate)
    }

    /// The figure is a bound, said as one: in flight × the largest input, or the budget when
    /// admission holds the run under a lower one; never called the peak.
    @Test func theImageMemoryFigureIsStatedAsTheBoundItIs() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 800, height: 600)), to: "in/b.png")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 100, height: 75)), to: "in/small.png")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#
            ], extra: #""inFlight": 3"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let bound: Int64 = 3 * ((30_000 + 30_000) * 4 + 30_000 * 11)

        let unlimited = PlanExplanation(plan: try pipeline.plan(), memoryBudget: nil)
        #expect(unlimited.estimatedPeakImageBytes == bound && unlimited.imageMemoryBound == bound)
        #expect(unlimited.text.contains("image memory, upper bound: 2 MB (in flight × the largest input's decode"), "\(unlimited.text)")
        #expect(unlimited.text.contains("streamed decodes usually peak well below it"))
        #expect(!unlimited.text.contains("peak image memory"))

        let budget = MemoryBudget(bytes: 1_000_000, limit: 200_000_000, source: "--max-memory")
        let limited = PlanExplanation(plan: try pipeline.plan(), memoryBudget: budget)
        #expect(limited.imageMemoryBound == 1_000_000)
        #expect(
            limited.text.contains("image memory, upper bound: 1 MB (the memory budget; without it 2 MB: in flight ×"), "\(limited.text)")

        let roomy = PlanExplanation(
            plan: try pipeline.plan(), memoryBudget: MemoryBudget(bytes: 1 << 30, limit: 2 << 30, source: "--max-memory"))
        #expect(roomy.imageMemoryBound == roomy.estimatedPeakImageBytes && !roomy.text.contains("without it"))
    }

    /// A file the run refuses before or as it reads the header says why, in the stage the run
    /// names, where it said the header could not be read: a PNG whose text inflates past the
    /// limit, an empty file and a text file.
    @Test func aRefusedFileSaysWhy() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try PNGStructureTests.png(with: 20, of: "zTXt", inflatingTo: 1 << 20), to: "in/bomb.png")
        try directory.write(Data(), to: "in/empty.png")
        try directory.write(Data("not an image\n".utf8), to: "in/text.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "t", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#])
        let text = try PipelineHarness.pipeline(json, in: directory).explain().text
        #expect(text.contains("in/bomb.png: decompress: the PNG's compressed text and profile chunks"), "\(text)")
        #expect(text.contains("in/empty.png: fetch: \(ItemError.emptyFile)\n"), "\(text)")
        #expect(text.contains("in/text.png: decompress: not an image libvips can read"), "\(text)")
    }
}
