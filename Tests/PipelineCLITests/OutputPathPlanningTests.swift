import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// What planning can know about output paths is found while planning, before any decode.
@Suite struct OutputPathPlanningTests {
    func writePipeline(_ directory: TemporaryDirectory, path: String) throws -> String {
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "jpeg"}, "path": "\#(path)"}"#
            ])
        return try directory.write(Data(json.utf8), to: "pipeline.json")
    }

    @Test func anOutputFolderThatIsAFileIsAnErrorBeforeAnyDecode() throws {
        // Given two inputs and an output template whose folder is a file
        let directory = try TemporaryDirectory()
        for name in ["a", "b"] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/\(name).jpg")
        }
        try directory.write(Data("not a folder".utf8), to: "out")
        let file = try writePipeline(directory, path: "out/{stem}.jpg")
        // When it is validated, and run
        let validate = try CommandRunner.run(["validate", file])
        let run = try CommandRunner.run(["run", file])
        // Then both exit 2 naming the output, the path and the file in the way, once
        for result in [validate, run] {
            #expect(result.status == 2, "\(result.standardError)")
            #expect(
                result.standardError.contains(
                    #"output "thumb" of in/a.jpg would write \#(directory.path)/out/a.jpg, but \#(directory.path)/out is a file, not a folder"#
                ),
                "\(result.standardError)")
            #expect(!result.standardError.contains("in/b.jpg"), "the same file named twice: \(result.standardError)")
        }
        // And nothing was decoded or written
        #expect(!run.standardError.contains("decompress"))
        #expect(directory.allFiles() == ["in/a.jpg", "in/b.jpg", "out", "pipeline.json"])
    }

    @Test func aFileNameLongerThanTheSystemAllowsIsRefusedForItsInputBeforeAnyDecode() throws {
        // Given an input whose name fills 251 bytes, and an output that adds 6 to it
        let directory = try TemporaryDirectory()
        let long = String(repeating: "n", count: 247)
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/\(long).jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/short.jpg")
        let file = try writePipeline(directory, path: "out/{name}-b.jpg")
        // When it is validated
        let validate = try CommandRunner.run(["validate", file])
        // Then the file is valid, and the input that would fail is named with the reason: as
        // the run would, validate exits 1
        #expect(validate.status == 1, "\(validate.standardError)")
        #expect(
            validate.standardError.contains("would be 257 bytes long: more than the 255 a file or folder name may have"),
            "\(validate.standardError)")
        // When it runs
        let run = try CommandRunner.run(["run", "--json", file])
        // Then that input is refused before decoding (at fetch, the first stage), and the other is written
        #expect(run.status == 1)
        #expect(run.standardError.contains("in/\(long).jpg: fetch: refused: output \"thumb\": the name"), "\(run.standardError)")
        let decodes = run.standardOutput.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "stageFinished" && $0["stage"] as? String == "decompress" }
        #expect(decodes.map { $0["input"] as? String } == ["in/short.jpg"])
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/short.jpg-b.jpg"])
    }

    @Test func anOutputWhoseNameIsTooLongIsRefusedAloneAndTheInputsOtherOutputsAreMade() throws {
        // Given an input whose name fills 251 bytes, an output that adds 6 to it and one that keeps it
        let directory = try TemporaryDirectory()
        let long = PipelineHarness.longStem
        let json = try PipelineHarness.longNamedInput(
            in: directory,
            beside: [#"{"name": "kept", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it is validated
        let validate = try CommandRunner.run(["validate", file])
        // Then the output that would fail is named with its input and the reason, and counted
        #expect(validate.status == 1, "\(validate.standardError)")
        #expect(validate.standardError.hasPrefix("in/\(long).jpg → long: refused: the name \"\(long).jpg-b.jpg\" in "))
        #expect(validate.standardError.contains("-b.jpg would be 257 bytes long"), "\(validate.standardError)")
        #expect(
            validate.standardOutput.hasSuffix("valid: 1 input, 2 outputs each; 1 refused (above), which a run would fail\n"),
            "\(validate.standardOutput)")
        // When it runs
        let run = try CommandRunner.run(["run", file])
        // Then the other output is made, and the run fails naming the refused one
        #expect(run.status == 1)
        #expect(run.standardError.contains("in/\(long).jpg → long: fetch: refused: the name"), "\(run.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/\(long).webp"])
        // And a second run makes nothing again, and says the same
        let again = try CommandRunner.run(["run", file])
        #expect(again.status == 1 && again.standardError.contains("in/\(long).jpg → long: fetch: refused: the name"))
        #expect(again.standardOutput.contains("1 up to date"), "\(again.standardOutput)")
    }

    @Test func anOutputNamedByTheInputsNameInAnotherFormatIsRefusedForThatInput() throws {
        // Given a JPEG and a WebP input, and WebP outputs named by the input's name or extension
        let directory = try TemporaryDirectory()
        let image = try Fixtures.gradient(width: 40, height: 30)
        try directory.write(try Fixtures.jpeg(image), to: "in/a.jpg")
        try directory.write(try image.encoded(suffix: ".webp"), to: "in/b.webp")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "named", "encode": {"format": "webp"}, "path": "out/{name}"}"#,
                #"{"name": "ext", "encode": {"format": "webp"}, "path": "ext/{stem}.{ext}"}"#,
                #"{"name": "kept", "encode": {"format": "webp"}, "path": "kept/{stem}.webp"}"#,
            ])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it is validated
        let validate = try CommandRunner.run(["validate", file])
        // Then the JPEG's outputs are refused, naming the extension and the format
        #expect(validate.status == 1, "\(validate.standardError)")
        for (output, path) in [("named", "out/a.jpg"), ("ext", "ext/a.jpg")] {
            #expect(
                validate.standardError.contains(
                    "in/a.jpg → \(output): refused: the path \(directory.path)/\(path) ends in .jpg but the output is encoded as webp"),
                "\(validate.standardError)")
        }
        #expect(!validate.standardError.contains("in/b.webp"), "\(validate.standardError)")
        // And a run makes the WebP's, and the JPEG's other output, and no WebP named .jpg
        let run = try CommandRunner.run(["run", file])
        #expect(run.status == 1)
        #expect(
            directory.allFiles().filter { !$0.hasPrefix("in/") && $0.hasSuffix(".webp") }
                == ["ext/b.webp", "kept/a.webp", "kept/b.webp", "out/b.webp"])
        #expect(!directory.allFiles().contains { $0.hasSuffix("a.jpg") && !$0.hasPrefix("in/") })
    }

    @Test func anExtensionAfterFormatOrFromAnotherPlaceholderIsChecked() throws {
        // Given an output of two formats whose path ends in a literal .png, and one named x.png
        // whose path ends in {output}
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/a.jpg")
        let literal = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [#"{"name": "set", "formats": [{"format": "webp"}, {"format": "png"}], "path": "out/{stem}-{format}.png"}"#])
        let named = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "x.png", "encode": {"format": "webp"}, "path": "out/{stem}-{output}"}"#])
        // When they are validated
        let first = try CommandRunner.run(["validate", try directory.write(Data(literal.utf8), to: "literal.json")])
        let second = try CommandRunner.run(["validate", try directory.write(Data(named.utf8), to: "named.json")])
        // Then the first is refused for its WebP, and the second for the input
        #expect(first.status == 2, "\(first.standardError)")
        #expect(
            first.standardError.contains("the path ends in .png but the output is encoded as webp (use {format})"), "\(first.standardError)"
        )
        #expect(
            second.standardError.contains("the path \(directory.path)/out/a-x.png ends in .png but the output is encoded as webp"),
            "\(second.standardError)")
        // And {ext} of an input without one leaves no bare dot
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "bare/photo")
        let bare = PipelineHarness.json(
            inputs: ["bare/photo"], outputs: [#"{"name": "same", "encode": {"format": "jpeg"}, "path": "out/{stem}.{ext}"}"#])
        let third = try CommandRunner.run(["validate", try directory.write(Data(bare.utf8), to: "bare.json")])
        #expect(third.standardError.contains("the path \(directory.path)/out/photo. ends in a dot"), "\(third.standardError)")
        // And neither does a tile pyramid's folder
        let tiles = PipelineHarness.json(
            inputs: ["bare/photo"], outputs: [#"{"name": "deep", "tiles": {"layout": "iiif"}, "path": "iiif/{stem}.{ext}"}"#])
        let fourth = try CommandRunner.run(["validate", try directory.write(Data(tiles.utf8), to: "tiles.json")])
        #expect(fourth.standardError.contains("the path \(directory.path)/iiif/photo. ends in a dot"), "\(fourth.standardError)")
    }

    @Test func aRefusedFileOfAnOutputOfSeveralIsNamedByItsWidthAndFormat() throws {
        // Given the long-named input, and an output of two widths whose names grow past 255 bytes
        let directory = try TemporaryDirectory()
        let long = PipelineHarness.longStem
        let widths = #"{"name": "set", "widths": [16, 24], "formats": [{"format": "webp"}], "path": "out/{name}-{width}.{format}"}"#
        let kept = #"{"name": "kept", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
        let json = try PipelineHarness.longNamedInput(in: directory, beside: [widths, kept])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it is validated, each file of the set is named as the run names it
        let validate = try CommandRunner.run(["validate", file])
        #expect(validate.status == 1, "\(validate.standardError)")
        #expect(validate.standardError.contains("in/\(long).jpg → set (16 px, webp): refused: the name"), "\(validate.standardError)")
        #expect(validate.standardError.contains("in/\(long).jpg → set (24 px, webp): refused: the name"), "\(validate.standardError)")
        #expect(validate.standardError.contains("in/\(long).jpg → long: refused: the name"), "\(validate.standardError)")
        #expect(validate.standardOutput.hasSuffix("3 refused (above), which a run would fail\n"), "\(validate.standardOutput)")
        let run = try CommandRunner.run(["run", file])
        #expect(run.standardError.contains("in/\(long).jpg → set (24 px, webp): fetch: refused: the name"), "\(run.standardError)")
    }
}
