import Foundation
import PipelineKit
import StandardProcessors
import TestSupport
import Testing

/// The embedding example (docs/embedding.md) compiles and runs, and the guide shows exactly this code.
@Suite struct ReadmeExampleTests {
    @Test func theEmbeddingExampleRunsTheBundledPipeline() async throws {
        // The bundled pipeline and its samples, copied into a folder of the test's own, so the
        // run writes its outputs and journal there and never into the repository.
        let directory = try TemporaryDirectory()
        let pipelines = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines")
        for name in ["thumbnails.json", "samples"] {
            try FileManager.default.copyItem(at: pipelines.appendingPathComponent(name), to: directory.url.appendingPathComponent(name))
        }
        let file = directory.url.appendingPathComponent("thumbnails.json")
        let outputFolder = directory.path + "/out"

        // README-EXAMPLE-BEGIN
        let pipeline = try Pipeline(contentsOf: file, processors: .standard)
        for await event in try pipeline.run() {
            switch event {
            case .itemCompleted(let report): print(report.input.displayName, report.succeeded ? "ok" : "\(report.failures)")
            case .finished(let summary): print("\(summary.succeeded) of \(summary.inputs) inputs in \(summary.elapsed)")
            default: break
            }
        }
        // README-EXAMPLE-END

        // Three files for each sample photograph, in the samples' folders.
        let samples = CommandRunner.samplePhotos
        let written = try FileManager.default.subpathsOfDirectory(atPath: outputFolder).filter {
            $0.hasSuffix(".webp") || $0.hasSuffix(".jpg")
        }
        #expect(samples.count >= 5 && written.count == samples.count * 3, "\(samples) \(written)")
    }

    @Test func theREADMEsPipelineFileIsTheBundledOne() throws {
        // The README shows Pipelines/thumbnails.json, laid out for reading: the same JSON value.
        let readme = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let heading = try #require(
            readme.range(of: "`Pipelines/thumbnails.json`:\n\n```json\n"), "README.md shows no Pipelines/thumbnails.json")
        let end = try #require(readme[heading.upperBound...].range(of: "```\n"))
        let shown = try JSONSerialization.jsonObject(with: Data(readme[heading.upperBound..<end.lowerBound].utf8)) as? NSDictionary
        let file =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json"))) as? NSDictionary
        #expect(shown != nil && shown == file, "README.md's copy of Pipelines/thumbnails.json differs from the file")
    }

    @Test func theEmbeddingGuideNamesEveryEventAndWhatAStageOperationCarries() throws {
        let guide = try String(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("docs/embedding.md"), encoding: .utf8)
        // Every case of PipelineEvent, as its source declares them
        let source = try String(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("Sources/PipelineKit/Runner/PipelineEvent.swift"),
            encoding: .utf8)
        let declaration = try #require(source.range(of: "public enum PipelineEvent"))
        let body = source[declaration.upperBound...].prefix { $0 != "}" }
        let cases = body.matches(of: /\n    case (\w+)/).map { String($0.output.1) }
        #expect(cases.count >= 5, "\(cases)")
        for name in cases { #expect(guide.contains("`.\(name)"), "docs/embedding.md does not describe .\(name)") }
        // and every field a StageOperation has
        let operation = try JSONDecoder().decode(
            StageOperation.self,
            from: Data(#"{"stage": "fetch", "input": "a", "queuedAt": 0, "startedAt": 0, "endedAt": 0, "lane": 0, "succeeded": true}"#.utf8)
        )
        for case let label? in Mirror(reflecting: operation).children.map(\.label) {
            #expect(guide.contains("`\(label)`"), "docs/embedding.md does not name StageOperation's \(label)")
        }
    }

    @Test func theEmbeddingGuideShowsTheExampleThatIsTested() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        guard let begin = source.range(of: "// README-EXAMPLE-BEGIN\n"), let end = source.range(of: "        // README-EXAMPLE-END") else {
            Issue.record("markers missing"); return
        }
        let example = source[begin.upperBound..<end.lowerBound]
            .split(separator: "\n").map { $0.dropFirst(8) }.joined(separator: "\n")
        let guide = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("docs/embedding.md"), encoding: .utf8)
        #expect(guide.contains(example), "docs/embedding.md's example differs from the tested one")
    }

    /// Every Swift block of the plugin guide names the file it belongs to, so that
    /// `.ci/plugin-guide.sh` (which builds those files as a package and runs its command) compiles
    /// all of them: a block without one would be code no build checks.
    @Test func everySwiftBlockOfThePluginGuideIsCompiled() throws {
        let guide = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("docs/writing-a-plugin.md"), encoding: .utf8)
        let lines = guide.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        var swiftBlocks = 0
        var inBlock = false
        for (index, line) in lines.enumerated() where line.hasPrefix("```") {
            defer { inBlock.toggle() }
            guard !inBlock, line == "```swift" else { continue }
            swiftBlocks += 1
            let marker = lines[..<index].last { !$0.isEmpty } ?? ""
            #expect(
                marker.hasPrefix("<!-- file: ") && marker.hasSuffix(" -->"),
                "docs/writing-a-plugin.md, line \(index + 1): a Swift block without a `<!-- file: PATH -->` line above it")
        }
        #expect(swiftBlocks >= 4)
        #expect(guide.contains(#".package(url: "https://github.com/pipeline/pipeline", from: "0.4.0")"#))
    }
}
