import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// An output's `"inputs"` through the `pipeline` command: validate, explain, run and the manifest.
@Suite struct OutputInputsCommandTests {
    func prepare(stillInputs: String = #"["photos/*.jpg"]"#) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 60, height: 40)), to: "anim/spin.png")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 80, height: 60)), to: "photos/beach.jpg")
        let file = try directory.write(
            Data(
                """
                {"version": 1, "name": "site", "inputs": ["anim/*.png", "photos/*.jpg"],
                 "manifest": {"path": "public/manifest.json", "urlPrefix": "/img/"},
                 "outputs": [
                   {"name": "loop", "inputs": ["anim/*"], "encode": {"format": "webp"}, "path": "public/{stem}.webp"},
                   {"name": "still", "inputs": \(stillInputs), "encode": {"format": "webp"}, "path": "public/{stem}.webp"},
                   {"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "jpeg"}, "path": "public/t/{stem}.jpg"}
                 ]}
                """.utf8), to: "site.json")
        return (directory, file)
    }

    @Test func aRunMakesEachOutputForItsInputsAndTheManifestSaysSo() throws {
        let (directory, file) = try prepare()
        let validate = try CommandRunner.run(["validate", file])
        #expect(validate.status == 0, "\(validate.standardError)")
        let explain = try CommandRunner.run(["explain", file])
        #expect(explain.standardOutput.contains("(only inputs \"anim/*\")"), "\(explain.standardOutput)")

        let run = try CommandRunner.run(["run", "--quiet", file])
        #expect(run.status == 0, "\(run.standardError)")
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("public/manifest.json"))
        #expect(manifest.input("anim/spin.png").map { Set($0.outputs.keys) } == ["loop", "thumb"])
        #expect(manifest.input("photos/beach.jpg").map { Set($0.outputs.keys) } == ["still", "thumb"])
        #expect(
            directory.allFiles().filter { $0.hasPrefix("public/") && $0.hasSuffix(".webp") } == ["public/beach.webp", "public/spin.webp"])

        // Over every input, an output one of them does not get leaves it out
        let html = try CommandRunner.run(["html", directory.url.appendingPathComponent("public/manifest.json").path, "--output", "loop"])
        #expect(html.status == 0, "\(html.standardError)")
        #expect(html.standardOutput.contains("<!-- anim/spin.png -->") && !html.standardOutput.contains("beach"))
    }

    @Test func globsThatMatchNoInputAreRefusedBeforeTheRun() throws {
        let (directory, file) = try prepare(stillInputs: #"["pictures/*.jpg"]"#)
        for command in ["validate", "run"] {
            let result = try CommandRunner.run([command, file])
            #expect(result.status == 2, "\(command): \(result.standardError)")
            #expect(result.standardError.contains("outputs[1].inputs"), "\(result.standardError)")
            #expect(result.standardError.contains("\"pictures/*.jpg\""))
        }
        #expect(!directory.allFiles().contains { $0.hasPrefix("public/") })
    }

    /// An output an input does not get plays no part in how that input is decoded, nor in its
    /// other files' fingerprints.
    @Test func anOutputLeftOutOfAnInputDoesNotSetItsDecodeOrRemakeItsFiles() throws {
        let directory = try TemporaryDirectory()
        for name in ["a", "b"] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 640, height: 480)), to: "photos/\(name).jpg")
        }
        func write(bigWidth: Int) throws -> String {
            try directory.write(
                Data(
                    """
                    {"version": 1, "name": "subset", "inputs": ["photos/*.jpg"], "outputs": [
                      {"name": "small", "steps": [{"resize": {"width": 20}}], "encode": {"format": "png"}, "path": "out/{stem}-s.png"},
                      {"name": "big", "inputs": ["photos/a.jpg"], "steps": [{"resize": {"width": \(bigWidth)}}],
                       "encode": {"format": "png"}, "path": "out/{stem}-b.png"}]}
                    """.utf8), to: "subset.json")
        }
        // Given a large output that only a.jpg gets
        let file = try write(bigWidth: 600)
        // Then b.jpg is decoded as small as its own output allows
        let explain = try CommandRunner.run(["explain", file])
        #expect(explain.standardOutput.contains("photos/a.jpg: jpeg 640×480, decoded at 600×450"), "\(explain.standardOutput)")
        #expect(explain.standardOutput.contains("photos/b.jpg: jpeg 640×480, shrink-on-load 8, decoded at 20×15"))
        #expect(try CommandRunner.run(["run", "--quiet", file]).status == 0)
        // And when that output changes, b.jpg's file is still up to date
        _ = try write(bigWidth: 500)
        let again = try CommandRunner.run(["run", "--json", file])
        #expect(again.standardOutput.contains(#""outputsUpToDate":1"#), "\(again.standardOutput)")
        #expect(again.standardOutput.contains(#""outputsWritten":2"#), "\(again.standardOutput)")
    }
}
