import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineCLI
@testable import PipelineKit

/// A processor defined outside PipelineKit and StandardProcessors, as another package would.
struct Posterize: ImageProcessing {
    static let name = "posterize"
    static let summary = "Reduces each band to a few levels."
    static let options: [Option] = [.integer("levels", in: 2...64, default: 4, help: "Levels per band.")]
    let levels: Int

    init(options: ProcessorOptions) throws(OptionError) {
        levels = try options.int("levels")
    }

    var identifier: String { "posterize(levels:\(levels))" }
    func outputSize(for size: ImageSize) -> ImageSize { size }

    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let step = 256.0 / Double(levels)
        return try image.applying("linear", ["a": .number(1 / step), "b": .number(0)])
            .applying("round", ["round": .string("floor")])
            .applying("linear", ["a": .number(step), "b": .number(0), "uchar": .boolean(true)])
    }
}

/// A processor added by another package shows up wherever a built-in one does: `plugins`, the
/// schema, validation, a run, `explain` and the journal.
@Suite struct ProcessorRegistryCommandTests {
    let registry = ProcessorRegistry.standard.adding(Posterize.self)

    private func json(step: String, path: String = "out/{stem}.png") -> String {
        PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "o", "steps": [\#(step)], "encode": {"format": "png"}, "path": "\#(path)"}"#
            ])
    }

    @Test func anAddedProcessorShowsUpWhereverABuiltInOneDoes() async throws {
        // plugins and schema
        let listing = PipelineCommand.Plugins.listing(of: registry)
        #expect(listing.contains("posterize: Reduces each band") && listing.contains("levels (integer 2–64, default 4)"))
        #expect(listing.contains("resize: "))
        let schema = JSONSchemaGenerator.schema(processors: registry)
        #expect(schema.contains(#""posterize""#) && schema.contains("Levels per band."))

        // validation, with suggestions for its name and its options
        let directory = try TemporaryDirectory()
        let misspelt = #expect(throws: PipelineFileError.self) {
            try PipelineHarness.pipeline(json(step: #"{"posterise": {}}"#), in: directory, processors: registry)
        }
        #expect(misspelt?.description.contains(#"did you mean "posterize""#) == true)
        let option = #expect(throws: PipelineFileError.self) {
            try PipelineHarness.pipeline(json(step: #"{"posterize": {"level": 3}}"#), in: directory, processors: registry)
        }
        #expect(option?.description.contains(#"did you mean "levels""#) == true)

        // a run, explain and the journal's fingerprints
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: [200, 100, 30])), to: "in/a.png")
        let first = try await PipelineHarness.run(json(step: #"{"posterize": {"levels": 4}}"#), in: directory, processors: registry)
        #expect(first.summary.outputsWritten == 1)
        let output = try VipsImage.open(file: directory.url.appendingPathComponent("out/a.png").path)
        #expect(try output.pixel(x: 0, y: 0) == [192, 64, 0])
        let explanation = try PipelineHarness.pipeline(json(step: #"{"posterize": {"levels": 4}}"#), in: directory, processors: registry)
            .explain().text
        #expect(explanation.contains("posterize"))
        let again = try await PipelineHarness.run(json(step: #"{"posterize": {"levels": 4}}"#), in: directory, processors: registry)
        #expect(again.summary.outputsUpToDate == 1 && again.summary.outputsWritten == 0)
        let changed = try await PipelineHarness.run(json(step: #"{"posterize": {"levels": 8}}"#), in: directory, processors: registry)
        #expect(changed.summary.outputsWritten == 1, "a changed option must make the output again")
    }
}
