import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The shape of the paths an output whose template names its size can write, for any input.
@Suite struct OutputPathShapeTests {
    /// The shape of the widest file of a set of 200 and 500 px whose path is `path`, with its
    /// files narrower than `narrowedBelow` when they differ (nil: any size).
    func shape(
        _ path: String, widths: String = "[200, 500]", base: String = "/site", narrowedBelow: Int? = 500
    ) throws -> OutputPathShape? {
        let definition = try PipelineDefinition(
            json: PipelineHarness.json(
                inputs: ["in/**/*.jpg"], outputs: [#"{"name": "o", "widths": \#(widths), "formats": ["webp"], "path": "\#(path)"}"#]),
            baseDirectory: URL(fileURLWithPath: base), processors: .standard)
        let output = try #require(definition.outputs.last)
        return OutputPathShape.sized(
            OutputTarget.Output(output, baseDirectory: definition.baseDirectory, fixedSize: (500, nil)), narrowedBelow: narrowedBelow)
    }

    @Test func anyInputsValuesAndAnySizeMatch() throws {
        let stem = try #require(try shape("out/{stem}-{width}.{format}"))
        #expect(stem.matches("/site/out/a-400.webp"))
        #expect(stem.matches("/site/out/IMG_0001-1-17.webp"))
        #expect(!stem.matches("/site/out/a.webp"))
        #expect(!stem.matches("/site/out/a-400.jpg"))
        #expect(!stem.matches("/site/out/a-.webp"))
        // A width narrowed from the widest is below it, and written without a leading zero
        #expect(!stem.matches("/site/out/a-500.webp") && !stem.matches("/site/out/a-2024.webp"))
        #expect(!stem.matches("/site/out/img-0000001.webp"))
        // unless a step may make it any size
        let unbounded = try #require(try shape("out/{stem}-{width}.{format}", narrowedBelow: nil))
        #expect(unbounded.matches("/site/out/a-500.webp") && unbounded.matches("/site/out/a-2024.webp"))
        #expect(!unbounded.matches("/site/out/img-0000001.webp"))
        #expect(!stem.matches("/site/out/sub/a-400.webp"), "a stem holds no /")
        #expect(!stem.matches("/elsewhere/out/a-400.webp"))
        // {dir} may be empty, or folders
        let dir = try #require(try shape("out/{dir}/{stem}-{width}x{height}.webp"))
        #expect(dir.matches("/site/out/a-400x300.webp"))
        #expect(dir.matches("/site/out/2024/may/a-400x300.webp"))
        #expect(!dir.matches("/site/out/2024/a-400.webp"))
        // A template naming no size has no shape
        #expect(try shape("out/{stem}.webp", widths: "[500]") == nil)
    }
}
