import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// A run of one pipeline file is refused while a run of another writes one of its files; runs
/// of one file may share them, and a claim left by a process that died blocks nothing.
@Suite struct RunClaimTests {
    /// A folder with `count` images and two pipeline files, `a.json` of every image and `b.json`
    /// of those `inputsB` names, whose outputs are written where `pathA` and `pathB` say.
    func folder(count: Int, pathA: String, pathB: String, inputsB: String = "in/*.png") throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let image = try Fixtures.noise(width: 400, height: 300).encoded(suffix: ".png")
        for index in 0..<count { try directory.write(image, to: "in/image-\(index).png") }
        for (name, path, inputs) in [("a", pathA, "in/*.png"), ("b", pathB, inputsB)] {
            let json = PipelineHarness.json(
                inputs: [inputs], outputs: [#"{"name": "t", "encode": {"format": "webp", "effort": 6}, "path": "\#(path)"}"#])
            try directory.write(Data(json.utf8), to: "\(name).json")
        }
        return directory
    }

    /// The pipeline file `name` in `directory`, keeping its claims in `claims`.
    func pipeline(_ name: String, in directory: TemporaryDirectory, claims: TemporaryDirectory) throws -> Pipeline {
        var pipeline = try Pipeline(contentsOf: directory.url.appendingPathComponent(name), processors: .standard, displayName: name)
        pipeline.environment = ["XDG_RUNTIME_DIR": claims.path]
        return pipeline
    }

    /// Expects a run of b.json in `directory` to be refused while a.json runs, naming `file`
    /// (relative to `directory`) and a.json's run.
    func expectRefusalOfB(
        in directory: TemporaryDirectory, claims: TemporaryDirectory, naming file: String,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        #expect(sourceLocation: sourceLocation) {
            _ = try pipeline("b.json", in: directory, claims: claims).run()
        } throws: { error in
            let message = "\(error)"
            return message.contains("b.json") && message.contains(directory.path + "/" + file)
                && message.contains("a run of \(directory.path)/a.json")
        }
    }

    @Test func aRunOfAnotherFileThatWouldWriteAFileARunningRunWritesIsRefused() async throws {
        // Given a.json running, and b.json, which writes one of its files
        let directory = try folder(count: 30, pathA: "out/{stem}.webp", pathB: "out/{stem}.webp", inputsB: "in/image-7.png")
        let claims = try TemporaryDirectory()
        let first = try pipeline("a.json", in: directory, claims: claims).run()
        // When b.json is run meanwhile, then it is refused, naming the file and a.json
        expectRefusalOfB(in: directory, claims: claims, naming: "out/image-7.webp")
        let summary = await first.collect().summary
        #expect(summary?.succeeded == 30)
        // And once a.json's run has ended, b.json runs
        let second = try await pipeline("b.json", in: directory, claims: claims).run().collect()
        #expect(second.summary?.failed == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: claims.path + "/pipeline-runs-\(getuid())").isEmpty)
    }

    @Test func aRunOfAnotherFileThatWouldWriteTheManifestARunningRunWritesIsRefused() async throws {
        // Given a.json and b.json, whose outputs are apart, naming one manifest, and a.json running
        let directory = try folder(count: 30, pathA: "out/{stem}.webp", pathB: "other/{stem}.webp")
        for name in ["a.json", "b.json"] {
            let path = directory.path + "/" + name
            let json = try String(contentsOfFile: path, encoding: .utf8)
            try directory.write(
                Data(json.replacingOccurrences(of: #""inputs""#, with: #""manifest": {"path": "site/manifest.json"}, "inputs""#).utf8),
                to: name)
        }
        let claims = try TemporaryDirectory()
        let first = try pipeline("a.json", in: directory, claims: claims).run()
        // When b.json is run meanwhile, then it is refused, naming the manifest and a.json: the
        // last to finish would leave the manifest with its own entries alone
        expectRefusalOfB(in: directory, claims: claims, naming: "site/manifest.json")
        #expect(await first.collect().summary?.succeeded == 30)
    }

    @Test func twoRunsOfOneFileAndRunsOfFilesWritingApartGoTogether() async throws {
        let directory = try folder(count: 4, pathA: "out/{stem}.webp", pathB: "other/{stem}.webp")
        let claims = try TemporaryDirectory()
        let first = try pipeline("a.json", in: directory, claims: claims).run()
        let again = try pipeline("a.json", in: directory, claims: claims).run()
        let apart = try pipeline("b.json", in: directory, claims: claims).run()
        for run in [first, again, apart] { #expect(await run.collect().summary?.failed == 0) }
    }

    @Test func aRunWithoutAFileThatNamesItselfClaimsAsARunOfAFileDoes() async throws {
        // Given a.json running, and a one-off pipeline (as `convert` builds) writing one of its files
        let directory = try folder(count: 30, pathA: "out/{stem}.webp", pathB: "out/{stem}.webp")
        let claims = try TemporaryDirectory()
        func oneOff(_ claimant: String?, inputs: String = "in/image-7.png") throws -> Pipeline {
            let json = PipelineHarness.json(
                inputs: [inputs], outputs: [#"{"name": "t", "encode": {"format": "webp", "effort": 6}, "path": "out/{stem}.webp"}"#])
            var pipeline = try Pipeline(json: json, baseDirectory: directory.url, processors: .standard)
            pipeline.environment = ["XDG_RUNTIME_DIR": claims.path]
            pipeline.claimant = claimant
            return pipeline
        }
        let first = try pipeline("a.json", in: directory, claims: claims).run()
        // When it runs meanwhile, then it is refused, naming the file and a.json
        #expect {
            _ = try oneOff("pipeline convert").run()
        } throws: { error in
            "\(error)".contains("\(directory.path)/out/image-7.webp") && "\(error)".contains("a run of \(directory.path)/a.json")
        }
        #expect(await first.collect().summary?.succeeded == 30)
        // And while one of all 30 runs, a run of a.json is refused in turn, naming it; and so is another one-off
        let running = try oneOff("pipeline convert", inputs: "in/*.png").run(force: true)
        #expect {
            _ = try pipeline("a.json", in: directory, claims: claims).run()
        } throws: { error in "\(error)".contains(#"a run of "pipeline convert" (no pipeline file)"#) }
        #expect(throws: PipelineFileError.self) { _ = try oneOff("pipeline convert").run() }
        #expect(await running.collect().summary?.failed == 0)
        // A pipeline without a file that names no claimant claims nothing, as before
        let unnamed = try oneOff(nil).run()
        let alongside = try pipeline("a.json", in: directory, claims: claims).run()
        for run in [unnamed, alongside] { #expect(await run.collect().summary?.failed == 0) }
    }

    @Test func aClaimLeftByAProcessThatDiedIsRemovedAndBlocksNothing() async throws {
        // Given a claim on a.json's files by a run of b.json whose process is gone (no lock held)
        let directory = try folder(count: 2, pathA: "out/{stem}.webp", pathB: "out/{stem}.webp")
        let claims = try TemporaryDirectory()
        let folder = claims.path + "/pipeline-runs-\(getuid())"
        let digest = PathDigest(DiskPath(directory.path + "/out/image-0.webp"))
        try claims.write(Data((directory.path + "/b.json\n").utf8) + Data(digest.bytes), to: "pipeline-runs-\(getuid())/999999-1.claim")
        // When a.json runs, then it does, and the dead claim is gone
        #expect(try await pipeline("a.json", in: directory, claims: claims).run().collect().summary?.succeeded == 2)
        #expect(!FileManager.default.fileExists(atPath: folder + "/999999-1.claim"))
    }
}
