import Foundation
import PipelineKit
import StandardProcessors

/// Runs pipelines given as JSON in a test's folder.
package enum PipelineHarness {
    package static func pipeline(_ json: String, in directory: TemporaryDirectory, processors: ProcessorRegistry = .standard) throws
        -> Pipeline
    {
        try Pipeline(json: json, baseDirectory: directory.url, processors: processors)
    }

    package static func run(_ json: String, in directory: TemporaryDirectory, processors: ProcessorRegistry = .standard) async throws -> (
        reports: [ItemReport], summary: RunSummary
    ) {
        let result = try await pipeline(json, in: directory, processors: processors).run().collect()
        guard let summary = result.summary else { throw HarnessError.noSummary }
        return (result.reports, summary)
    }

    /// A pipeline file with the given inputs and outputs (each output a JSON object).
    package static func json(inputs: [String], outputs: [String], extra: String = "") -> String {
        let inputList = inputs.map { JSONNode.quoted($0) }.joined(separator: ", ")
        return """
            {"version": 1, "inputs": [\(inputList)], \(extra.isEmpty ? "" : extra + ",")
             "outputs": [\(outputs.joined(separator: ",\n"))]}
            """
    }

    /// What loading `json` (from `/tmp`, with the standard processors) finds wrong with it; none
    /// when it loads.
    package static func problems(_ json: String) -> [PipelineFileError.Problem] {
        do {
            _ = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
            return []
        } catch {
            return error.problems
        }
    }

    package enum HarnessError: Error { case noSummary }
}
