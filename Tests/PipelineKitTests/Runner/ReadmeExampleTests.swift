import Foundation
import Testing
import PipelineKit
import StandardProcessors
import TestSupport

/// The README's embedding example compiles and runs, and the README shows exactly this code.
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
