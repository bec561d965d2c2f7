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

/// A processor whose declarations no file could mend: defaults its own shapes refuse, an
/// option declared twice, a range JSON cannot write and a choice of nothing.
struct MisdeclaredProcessor: ImageProcessing {
    static let name = "misdeclared"
    static let summary = "Declares its options wrongly."
    static let options: [Option] = [
        .integer("n", in: 1...10, default: 50, help: "a count"),
        .choice("mode", ["a", "b"], default: "zzz", help: "a mode"),
        .colour("tint", default: "not-a-colour", help: "a tint"),
        .boolean("flag", default: false, help: "a flag"),
        .integer("n", in: 1...3, help: "the count again"),
        .number("scale", in: 0...Double.infinity, default: 1, help: "a scale"),
        .choice("none", [], help: "nothing to choose"),
    ]
    let flag: Int
    init(options: ProcessorOptions) throws(OptionError) { flag = try options.int("flag") }
    var identifier: String { "misdeclared" }
    func outputSize(for size: ImageSize) -> ImageSize { size }
    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage { image }
}

/// A processor whose option's range ends at `Int.max`.
struct BigOptionProcessor: ImageProcessing {
    static let name = "big"
    static let summary = "Reads an integer up to Int.max."
    static let options: [Option] = [.integer("seed", in: 0...Int.max, default: Int.max, help: "a seed")]
    init(options: ProcessorOptions) throws(OptionError) { _ = try options.int("seed") }
    var identifier: String { "big" }
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

    @Test func optionsAProcessorDeclaresWronglyAreAnErrorThatNamesItAndEachOption() throws {
        // Given a processor declaring defaults its own shapes refuse, and an option twice
        let registry = ProcessorRegistry.standard.adding(MisdeclaredProcessor.self)
        // Then the registry names each, and the standard processors have none
        #expect(ProcessorRegistry.standard.declarationProblems.isEmpty, "\(ProcessorRegistry.standard.problems)")
        let problems = registry.declarationProblems.map { "\($0.option): \($0.reason)" }
        #expect(
            problems == [
                "n: with the default 50, which its shape refuses: 50 is out of range: expected 1…10",
                #"mode: with the default "zzz", which its shape refuses: unknown value "zzz": expected one of "a", "b""#,
                #"tint: with the default "not-a-colour", which its shape refuses: "#
                    + ##"expected a colour such as "#ffffff", "#0008", "white" or [255, 255, 255], found the string "not-a-colour""##,
                "n: twice",
                "scale: with the range 0.0…inf: JSON has no infinity, so give the bounds as finite numbers",
                "none: as a choice of no values",
            ], "\(problems)")
        #expect(
            registry.problems.allSatisfy {
                $0.hasPrefix(#"processor "misdeclared" (PipelineKitTests.MisdeclaredProcessor) declares option"#)
            })
        // and no pipeline loads with it, even one that does not use the step
        let directory = try TemporaryDirectory()
        let error = #expect(throws: PipelineFileError.self) {
            try PipelineHarness.pipeline(json(step: #"{"resize": {"width": 3}}"#), in: directory, processors: registry)
        }
        #expect(error?.problems.count == 6, "\(String(describing: error))")
    }

    @Test func anIntegerAtTheEndOfIntsRangeIsReadAsDeclared() throws {
        // A number is held as a Double, which Int.max is not exactly
        let big = Option.integer("big", in: 0...Int.max, default: Int.max, help: "a seed")
        #expect(try ProcessorOptions(values: [:], definitions: [big]).int("big") == Int.max)
        let given = try JSONParser.parse("9223372036854775807")
        #expect(try ProcessorOptions(values: ["big": given], definitions: [big]).int("big") == Int.max)
        #expect(ProcessorRegistry([BigOptionProcessor.self]).declarationProblems.isEmpty)
    }

    @Test func anOptionReadAsAnotherTypeThanDeclaredIsTheProcessorsMistake() throws {
        // Given a processor that reads its boolean option as an integer
        let options = ProcessorOptions(values: [:], definitions: MisdeclaredProcessor.options)
        // When it is made, the error says the processor reads it as it does not declare it
        let error = #expect(throws: OptionError.self) { try MisdeclaredProcessor(options: options) }
        #expect(error?.option == "flag")
        #expect(
            error?.message
                == "the processor reads it as an integer, but declares a shape that lets false through: read it as it is declared",
            "\(String(describing: error))")
    }
}
