import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips
import VipsResize

@testable import PipelineKit

/// A second processor that claims the name `resize`.
struct OtherResize: ImageProcessing {
    static let name = "resize"
    static let summary = "Not the real one."
    static let options: [Option] = []
    init(options: ProcessorOptions) throws(OptionError) {}
    var identifier: String { "other-resize" }
    func outputSize(for size: ImageSize) -> ImageSize { size }
    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage { image }
}

/// Two processors registered under one name: the registry keeps the first and names both.
@Suite struct ProcessorRegistryTests {
    private func json(step: String, path: String = "out/{stem}.png") -> String {
        PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "o", "steps": [\#(step)], "encode": {"format": "png"}, "path": "\#(path)"}"#
            ])
    }

    @Test func twoProcessorsWithOneNameAreAnErrorThatNamesBoth() throws {
        // Registering a second `resize` keeps the first and records the clash
        let clashing = ProcessorRegistry.standard.adding(OtherResize.self)
        #expect(clashing.processor(named: "resize") == Resize.self)
        let conflict = try #require(clashing.conflicts.first)
        #expect(conflict.description.contains("VipsResize.Resize") && conflict.description.contains("OtherResize"))
        #expect(throws: ProcessorRegistry.NameConflict.self) { try clashing.checked() }

        // and no pipeline loads with it
        let directory = try TemporaryDirectory()
        let error = #expect(throws: PipelineFileError.self) {
            try PipelineHarness.pipeline(json(step: #"{"resize": {"width": 3}}"#), in: directory, processors: clashing)
        }
        #expect(error?.description.contains("two processors are registered as step \"resize\"") == true)
        #expect(ProcessorRegistry([Resize.self, OtherResize.self, OtherResize.self]).conflicts.count == 2)
        // The one type registered twice is no conflict: it is kept once
        let twice = ProcessorRegistry.standard.adding(Resize.self)
        #expect(twice.conflicts.isEmpty && twice.processor(named: "resize") == Resize.self)
    }
}
