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
}
