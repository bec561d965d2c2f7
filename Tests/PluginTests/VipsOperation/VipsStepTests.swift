import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips
import VipsOperation

@testable import PipelineKit

@Suite("The vips step")
struct VipsStepTests {

    /// Loads a pipeline whose one output has `step`, and returns its problems (empty when valid).
    private func problems(_ step: String) throws -> [PipelineFileError.Problem] {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "o", "steps": [\#(step)], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ])
        do {
            _ = try PipelineHarness.pipeline(json, in: directory)
            return []
        } catch let error as PipelineFileError {
            return error.problems
        }
    }

    private func message(_ step: String) throws -> String {
        let found = try problems(step)
        #expect(found.count == 1, "\(found)")
        return found.map { "\($0.path): \($0.message)" }.joined(separator: "\n")
    }

    @Test func anyOneImageOperationRunsWithItsArguments() throws {
        // Given the vips step calling flip, with an enum argument by its nick
        let step = try VipsStep(operation: "flip", jsonArguments: ["direction": JSONNode(plain: "horizontal")])
        let image = try Fixtures.redLeftBlueRight(width: 10, height: 4)

        // When it runs, then the left column is the original's right column
        let flipped = try step.applied(to: image)
        #expect(try flipped.pixel(x: 0, y: 0) == (try image.pixel(x: 9, y: 0)))
        #expect(step.identifier == #"vips(operation:flip,direction:"horizontal")"#)

        // Numbers, booleans and arrays reach libvips: a linear scale per band
        let linear = try VipsStep(
            operation: "linear",
            jsonArguments: ["a": JSONNode(plain: [0.5, 1, 1]), "b": JSONNode(plain: 10), "uchar": JSONNode(plain: true)])
        #expect(try linear.applied(to: Fixtures.solid(width: 2, height: 2, colour: [100, 100, 100])).pixel(x: 0, y: 0) == [60, 110, 110])
    }

    @Test func mistakesAreFoundWhenTheFileIsLoadedWithSuggestions() throws {
        #expect(try message(#"{"vips": {"operation": "gausblur", "sigma": 2}}"#).contains(#"did you mean "gaussblur""#))
        let unknown = try message(#"{"vips": {"operation": "gaussblur", "sigma": 2, "min_amp": 0.1}}"#)
        #expect(unknown.contains("outputs[0].steps[0].vips.min_amp") && unknown.contains(#"did you mean "min_ampl""#))
        let badEnum = try message(#"{"vips": {"operation": "flip", "direction": "horizontl"}}"#)
        #expect(badEnum.contains(#"did you mean "horizontal""#))
        let outOfRange = try message(#"{"vips": {"operation": "gaussblur", "sigma": 2, "precision": "float", "min_ampl": 7}}"#)
        #expect(outOfRange.contains("min_ampl") && outOfRange.contains("number"))
        let wrongType = try message(#"{"vips": {"operation": "gaussblur", "sigma": "big"}}"#)
        #expect(wrongType.contains("sigma"))
        let missing = try message(#"{"vips": {"operation": "flip"}}"#)
        #expect(missing.contains(#""direction""#))
        let image = try message(#"{"vips": {"operation": "flip", "direction": "vertical", "in": 1}}"#)
        #expect(image.contains("image"))
        #expect(try problems(#"{"vips": {"operation": "gaussblur", "sigma": 1.5, "precision": "approximate"}}"#).isEmpty)
    }

    @Test(arguments: [
        ("jpegload", "loader or saver"),
        ("pngsave", "loader or saver"),
        ("system", "could name or carry files"),
        ("icc_transform", "string"),
        ("text", "string"),
        ("composite", "array of images"),
        ("add", "2 required input images"),
        ("black", "0 required input images"),
    ])
    func operationsThatReachFilesOrTakeOtherImagesAreRefused(operation: String, reason: String) throws {
        let text = try message(#"{"vips": {"operation": "\#(operation)"}}"#)
        #expect(text.contains("outputs[0].steps[0].vips.operation") && text.contains(reason), "\(text)")
    }

    @Test func deprecatedOperationsAreRefused() throws {
        // libvips 8.14 marks only some savers deprecated (pbmsave_target, kept for old callers)
        let all = VipsOperationInfo.allNames.compactMap(VipsOperationInfo.named)
        let deprecated = try #require(all.first { $0.isDeprecated })
        #expect(try message(#"{"vips": {"operation": "\#(deprecated.name)"}}"#).contains("deprecated"))
    }

    @Test func everyPermittedOperationTakesOneImageAndNoFileArguments() {
        let permitted = VipsStep.permittedOperations
        #expect(permitted.count > 50)
        let names = Set(permitted.map(\.name))
        #expect(names.isSuperset(of: ["flip", "gaussblur", "sharpen", "embed", "rot", "gamma", "invert", "colourspace"]))
        #expect(names.isDisjoint(with: ["jpegload", "system", "pngsave", "thumbnail", "profile_load", "composite"]))
    }

    @Test func anOperationThatWouldExceedMaxPixelsFailsThatItemNotTheRun() async throws {
        // Given two inputs and a vips step that embeds each in a canvas larger than maxPixels allows
        let directory = try TemporaryDirectory()
        for name in ["a", "b"] {
            try directory.write(try Fixtures.png(try Fixtures.solid(width: 20, height: 20, colour: Fixtures.red)), to: "in/\(name).png")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "huge", "steps": [{"vips": {"operation": "embed", "x": 0, "y": 0, "width": 5000, "height": 5000}}], "encode": {"format": "png"}, "path": "out/{stem}-huge.png"}"#,
                #"{"name": "flipped", "steps": [{"vips": {"operation": "flip", "direction": "vertical"}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
            ], extra: #""decompress": {"maxPixels": 1000000}"#)

        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)

        // Then each input's huge output fails with the reason, and the other output is written
        #expect(summary.inputs == 2 && summary.outputsWritten == 2)
        for report in reports {
            #expect(report.written.map(\.output) == ["flipped"])
            let failure = try #require(report.failures.first)
            #expect(failure.output == "huge" && failure.reason.contains("5000×5000") && failure.reason.contains("maxPixels"))
        }
        #expect(!directory.allFiles().contains { $0.contains("huge") })
    }

    /// A vips step cannot say what size it makes: after a resize the plan takes the resize's
    /// size, and finds these two paths distinct. Made, both name one file: the one whose size
    /// is not the declared one fails, naming why, and writes over nothing.
    @Test func aPathFilledWithASizeTheStepsDidNotDeclareIsRefusedNotWrittenOverAnother() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 200)), to: "in/dune.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "a", "steps": [{"resize": {"width": 200}}, {"vips": {"operation": "shrink", "hshrink": 2, "vshrink": 2}}], "encode": {"format": "png"}, "path": "out/{stem}-{width}.png"}"#,
                #"{"name": "b", "steps": [{"resize": {"width": 100}}, {"vips": {"operation": "invert"}}], "encode": {"format": "png"}, "path": "out/{stem}-{width}.png"}"#,
            ])
        // Run twice: the second run makes a again (it failed) and finds b up to date
        for _ in 0..<2 {
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            let report = try #require(reports.first)
            #expect(summary.failed == 1 && report.written.map(\.output) == ["b"])
            let failure = try #require(report.failures.first)
            #expect(
                failure.output == "a" && failure.reason.contains("its image is 100×50, not the 200×? its steps declare")
                    && failure.reason.contains("is output \"b\"'s"), "\(failure.reason)")
            // The file is b's, inverted, as the input is not
            let input = try VipsImage.open(file: directory.path + "/in/dune.jpg").rendered().pixel(x: 0, y: 0)
            let written = try VipsImage.open(file: directory.path + "/out/dune-100.png").rendered().pixel(x: 0, y: 0)
            #expect(abs(written[0] - (255 - input[0])) < 20, "\(written) from \(input)")
        }
    }

    /// An operation that enlarges is counted at the size it makes, learned by building it on a
    /// blank image without running it: a ×9 zoom was counted at its input's size, so inputs were
    /// admitted together past the memory budget.
    @Test func theMemoryEstimateCountsTheSizeTheOperationMakes() throws {
        func bytes(_ step: String) throws -> Int64 {
            let output = #"{"name": "o", "steps": [\#(step)], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            let json = PipelineHarness.json(inputs: ["in/*"], outputs: [output])
            let outputs = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
            return DecodeMemoryEstimate.imageBytes(decodeSize: ImageSize(width: 200, height: 100), outputs: outputs)
        }
        #expect(try bytes(#"{"vips": {"operation": "zoom", "xfac": 9, "yfac": 9}}"#) == Int64(200 * 100 + 1800 * 900) * 4)
        #expect(
            try bytes(#"{"vips": {"operation": "embed", "x": 0, "y": 0, "width": 3000, "height": 100}}"#) == Int64(200 * 100 + 3000 * 100)
                * 4)
        // One that keeps the size is counted as before
        #expect(try bytes(#"{"vips": {"operation": "gamma"}}"#) == Int64(200 * 100 * 2) * 4)
        // and one that reads pixels as it is built is not run on the blank: its input's size
        let statistic = try VipsStep(operation: "hist_find", jsonArguments: [:])
        #expect(statistic.workingSize(for: ImageSize(width: 20000, height: 20000)) == ImageSize(width: 20000, height: 20000))
    }
}
