import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// A `trim` before a set's resize: the plan cannot tell the trimmed width, so widths it expected
/// to be below the image's may stand in for the image's own width beside the one that does.
/// Each file is made once, by one width, and found up to date by every width that names it.
@Suite struct TrimmedSetTests {
    @Test func twoWidthsStandingInForATrimmedImageMakeItsFileOnceAndARerunDecodesNothing() async throws {
        // Given the trimmed set beside an output of the image's own width
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.boxedPNG(), to: "in/box.png")
        let pipeline = try PipelineHarness.pipeline(Fixtures.trimmedSetJSON(path: "out/t/{stem}-{width}.png"), in: directory)

        // When it runs
        let first = try await pipeline.run().collect()

        // Then the narrower width and the image's own are made, each once, and nothing fails
        #expect(first.reports.allSatisfy { $0.failures.isEmpty }, "\(first.reports.flatMap(\.failures))")
        let paths = first.reports.flatMap(\.written).map { String($0.path.dropFirst(directory.path.count + 1)) }
        #expect(paths.sorted() == ["out/e/box-400.jpg", "out/t/box-60.png", "out/t/box-80.png"])
        #expect(try VipsImage.open(file: directory.path + "/out/t/box-80.png").size == ImageSize(width: 80, height: 60))

        // And run again, it finds every file up to date without decoding the input
        var decodes = 0
        var summary: RunSummary?
        var listed: [String] = []
        for await event in try pipeline.run() {
            if case .stageFinished(let operation) = event, operation.stage == .decompress { decodes += 1 }
            if case .itemCompleted(let report) = event { listed += report.written.map(\.path) }
            if case .finished(let final) = event { summary = final }
        }
        #expect(decodes == 0)
        // and lists each file once, as the report, the JSON and the manifest do
        #expect(listed.count == 3)
        #expect(summary?.outputsWritten == 0)
        #expect(summary?.failed == 0)
    }

    /// An enlarging set after a trim (80 px once trimmed, 400 before), listing "original": with
    /// a width equal to the trimmed image's, which makes "original"'s file, or one equal to
    /// the untrimmed image's, which does not.
    @Test(arguments: [
        ("[60, 80, 100, \"original\"]", ["box-100.png", "box-60.png", "box-80.png"]),
        ("[60, 400, \"original\"]", ["box-400.png", "box-60.png", "box-80.png"]),
    ])
    func anEnlargingSetsOriginalIsTheTrimmedImagesOwnWidth(widths: String, files: [String]) async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.boxedPNG(), to: "in/box.png")
        let json = Fixtures.trimmedSetJSON(widths: widths, enlarges: true, path: "out/{stem}-{width}.png")
        let pipeline = try PipelineHarness.pipeline(json, in: directory)

        // When it runs twice
        for run in 0..<2 {
            let result = try await pipeline.run().collect()

            // Then "original" is one file at the trimmed image's 80 px, made once: nothing
            // fails, each file is listed once, and a re-run finds them all up to date
            #expect(result.reports.allSatisfy { $0.failures.isEmpty }, "run \(run): \(result.reports.flatMap(\.failures))")
            let names = result.reports.flatMap(\.written).map { ($0.path as NSString).lastPathComponent }
            #expect(names.sorted() == files, "run \(run)")
            #expect(result.summary?.outputsWritten == (run == 0 ? 3 : 0))
        }
        #expect(try VipsImage.open(file: directory.path + "/out/box-80.png").size == ImageSize(width: 80, height: 60))
    }

    @Test func theWidthThatMakesAFileIsTheOneItsImageWouldChoose() throws {
        // Given sets with "original", a width equal to the trimmed image's, and one that enlarges
        func maker(_ widths: String, enlarges: Bool = false, of width: Int?) throws -> Int? {
            let json = Fixtures.trimmedSetJSON(widths: widths, enlarges: enlarges, path: "out/{stem}-{width}.png")
            let definition = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
            let index = try #require(definition.outputs.firstIndex { $0.variant?.width == width })
            let members = try #require(definition.setOfEachWidth[index])
            let made = definition.maker(ofFileOf: index, in: members, atResize: ImageSize(width: 80, height: 60))
            return definition.outputs[made].variant?.width
        }
        // When its image reaches the resize 80 px wide
        // Then widths above it are made by the narrowest above it, or by "original"
        #expect(try maker("[60, 100, 640]", of: 640) == 100)
        #expect(try maker("[60, 100, 640]", of: 100) == 100)
        #expect(try maker("[60, 100, 640]", of: 60) == 60)
        #expect(try maker(#"[60, 640, "original"]"#, of: 640) == nil)
        // by a width equal to the image's, or by "original" when the set has both
        #expect(try maker("[80, 100]", of: 100) == 80)
        #expect(try maker(#"[80, "original"]"#, of: 80) == nil)
        // and, enlarging, every width is its own, and "original" is the width equal to the image's
        #expect(try maker(#"[80, 640, "original"]"#, enlarges: true, of: 640) == 640)
        #expect(try maker(#"[80, 640, "original"]"#, enlarges: true, of: nil) == 80)
    }
}
