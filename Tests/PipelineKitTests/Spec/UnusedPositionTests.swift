import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// A resize `position` places something only in a box of width and height: given with one of
/// them, which keeps the aspect ratio and crops nothing, it is named in a warning.
@Suite struct UnusedPositionTests {
    /// The warnings of a pipeline file of `output` alone.
    func warnings(_ output: String) throws -> [String] {
        let json = #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [\#(output)]}"#
        return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/site", isDirectory: true), processors: .standard)
            .warnings
    }

    @Test func aPositionWithOneSizeIsNamedInAWarning() throws {
        let alone = try warnings(
            #"{"name": "o", "steps": [{"resize": {"width": 100, "position": "north"}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        )
        #expect(
            alone == [
                "outputs[0].steps[0].resize.position places nothing: the resize has a width alone, so it keeps the aspect ratio and crops nothing; give both width and height"
            ])
        let widths = try warnings(
            #"{"name": "o", "widths": [100, 200], "steps": [{"resize": {"position": "attention"}}], "formats": ["png"], "path": "out/{stem}-{width}.png"}"#
        )
        #expect(widths.count == 1 && widths[0].hasSuffix("give both width and height, or art"), "\(widths)")
    }

    @Test func aPositionInABoxOrInArtCropsIsNoWarning() throws {
        #expect(
            try warnings(
                #"{"name": "o", "steps": [{"resize": {"width": 100, "height": 50, "position": "north"}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ).isEmpty)
        // Widths give the width and art the height (Pipelines/website.json's hero)
        #expect(
            try warnings(
                #"{"name": "o", "widths": [100, 200], "art": [{"media": "(max-width: 600px)", "aspectRatio": "1:1", "widths": [100]}], "steps": [{"resize": {"position": "attention"}}], "formats": ["png"], "path": "out/{stem}{art}-{width}.png"}"#
            ).isEmpty)
    }
}
