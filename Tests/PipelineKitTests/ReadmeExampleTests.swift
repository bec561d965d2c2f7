import Foundation
import Testing
import PipelineKit
import StandardProcessors

/// The README's embedding example compiles and runs, and the README shows exactly this code.
@Suite struct ReadmeExampleTests {
    @Test func theEmbeddingExampleRunsTheBundledPipeline() async throws {
        // The example uses a path relative to the package root, as a user's program would.
        #expect(FileManager.default.fileExists(atPath: "Pipelines/thumbnails.json"), "run the tests from the package root")
        let outputFolder = "Pipelines/out"
        try? FileManager.default.removeItem(atPath: outputFolder)

        // README-EXAMPLE-BEGIN
        let pipeline = try Pipeline(contentsOf: URL(fileURLWithPath: "Pipelines/thumbnails.json"), processors: .standard)
        for await event in try pipeline.run() {
            switch event {
            case .itemCompleted(let report): print(report.input.displayName, report.succeeded ? "ok" : "\(report.failures)")
            case .finished(let summary): print("\(summary.succeeded) of \(summary.inputs) inputs in \(summary.elapsed)")
            default: break
            }
        }
        // README-EXAMPLE-END

        let written = try FileManager.default.contentsOfDirectory(atPath: outputFolder)
        #expect(written.filter { !$0.hasPrefix(".") }.count == 15)
    }

    @Test func theReadmeShowsTheExampleThatIsTested() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        guard let begin = source.range(of: "// README-EXAMPLE-BEGIN\n"), let end = source.range(of: "        // README-EXAMPLE-END") else {
            Issue.record("markers missing"); return
        }
        let example = source[begin.upperBound..<end.lowerBound]
            .split(separator: "\n").map { $0.dropFirst(8) }.joined(separator: "\n")
        let readme = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(example), "README.md's embedding example differs from the tested one")
    }

    /// Every Swift block of the README's plugin section is code of `Examples/PluginPackage`,
    /// which CI builds, tests and runs: so the recipe the README shows compiles.
    @Test func thePluginSectionShowsCodeOfTheExamplePackage() throws {
        let root = CommandRunner.repositoryRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "## Writing a processor plugin"),
              let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex) else {
            Issue.record("the README has no plugin section"); return
        }
        let section = String(readme[start.upperBound..<end.lowerBound])
        let blocks = section.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count >= 3)
        let example = root.appendingPathComponent("Examples/PluginPackage")
        let files = ["Package.swift", "Sources/SepiaProcessor/Sepia.swift", "Sources/sepia-pipeline/main.swift"]
        let sources = try files.map { try String(contentsOf: example.appendingPathComponent($0), encoding: .utf8) }
        for block in blocks {
            // The README indents blocks inside list items by three spaces; the files by four a level.
            let lines = block.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("   ") ? String($0.dropFirst(3)) : String($0) }
            let code = lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let found = sources.contains { source in
                let sourceLines = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                return sourceLines.indices.contains { index in Array(sourceLines[index...].prefix(code.count)) == code }
            }
            #expect(found, "README block not found in Examples/PluginPackage:\n\(block)")
        }
    }
}
