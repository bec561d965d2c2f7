import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Odd input names through `pipeline run`: each output under its own name, no shell run.
@Suite struct HostilePathCommandTests {
    func output(_ name: String, format: String = "webp", path: String) -> String {
        #"{"name": "\#(name)", "steps": [{"resize": {"width": 8}}], "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    static let oddNames = [
        "with space.jpg", "  leading and trailing  .jpg", "ünïcödé-日本語-🙂.jpg", "e\u{301}-decomposed.jpg",
        "$(touch pwned).jpg", "`touch pwned`.jpg", "a;b&c|d.jpg", "quote'double\"back\\slash.jpg",
        "star*question?[brackets].jpg", "-starts-with-dash.jpg", "new\nline.jpg", "tab\there.jpg",
        "%2e%2e.jpg", "..hidden-ish.jpg", "#hash {brace}.jpg", "percent%s%n.jpg",
    ]

    @Test func oddInputNamesWorkThroughTheCommandLine() throws {
        // Given inputs with spaces, Unicode (composed and decomposed), shell metacharacters,
        // glob characters, a newline and percent escapes in their names
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24))
        for name in Self.oddNames { try directory.write(photo, to: "in/\(name)") }
        // ("*" skips names that start with a dot, as shells do; ".*" picks them up.)
        let pipeline = PipelineHarness.json(inputs: ["in/*", "in/.*"], outputs: [output("t", path: "out/{stem}.webp")])
        let file = try directory.write(Data(pipeline.utf8), to: "pipeline.json")
        // When `pipeline run` processes them
        let result = try CommandRunner.run(["run", file], in: directory.url)
        // Then each has its output under its own name, in the output folder, and no shell ran
        #expect(result.status == 0, "\(result.standardError)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/out").sorted()
        let expected = Self.oddNames.map { ($0 as NSString).deletingPathExtension + ".webp" }.sorted()
        #expect(written.map { Array($0.utf8) } == expected.map { Array($0.utf8) })
        #expect(!directory.allFiles().contains { $0.hasSuffix("pwned") })
        #expect(!FileManager.default.fileExists(atPath: "pwned"))
    }

    @Test func namesThatDifferOnlyInHowAnAccentIsEncodedAreTwoInputs() throws {
        // Given two files whose names are canonically equal but not the same bytes: "é" as one
        // character, and as "e" with a combining accent (Linux file systems keep both)
        let directory = try TemporaryDirectory()
        let names = ["caf\u{E9}.jpg", "cafe\u{301}.jpg"]
        for (index, name) in names.enumerated() {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32 + index * 8, height: 24)), to: "in/\(name)")
        }
        let pipeline = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [output("t", format: "png", path: "out/{stem}.png")], extra: #""incremental": true"#)
        let file = try directory.write(Data(pipeline.utf8), to: "pipeline.json")
        // When `pipeline run` makes them
        let result = try CommandRunner.run(["run", file], in: directory.url)
        // Then each is read and made under its own name: neither is taken for a repeat of the
        // other, nor their outputs for one path
        #expect(result.status == 0, "\(result.standardError)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")
        #expect(Set(written.map { Array($0.utf8) }) == Set(["caf\u{E9}.png", "cafe\u{301}.png"].map { Array($0.utf8) }))
        // (32×24 and 40×24 resized to a width of 8: 6 and 5 rows)
        let heights = try ["caf\u{E9}.png", "cafe\u{301}.png"].map {
            try VipsImage.open(data: Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/" + $0))).height
        }
        #expect(heights == [6, 5])
        // And a second run finds both up to date by the journal, each under its own path
        let again = try CommandRunner.run(["run", file], in: directory.url)
        #expect(again.status == 0 && again.standardOutput.contains("0 outputs written, 2 up to date"), "\(again.standardOutput)")
    }
}
