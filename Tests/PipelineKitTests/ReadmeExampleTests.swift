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
}
