import Foundation
import PipelineKit
import StandardProcessors

/// Runs pipelines given as JSON in a test's folder.
package enum PipelineHarness {
    /// An environment in which a plan with outputs in a bucket is made without an S3 server:
    /// credentials, without which such outputs are refused, and an endpoint on a closed loopback
    /// port, so that asking whether a bucket exists gets no answer and leaves it be.
    package static func offlineS3Environment(home: String) -> [String: String] {
        [
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9", "HOME": home,
        ]
    }

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

    /// The stem of an input whose file name (`STEM.jpg`) fills 251 of the 255 bytes a name may have.
    package static let longStem = String(repeating: "n", count: 247)

    /// Writes a small photo named by `longStem` into `directory`'s `in/`, and returns a pipeline
    /// file over `in/*.jpg` whose output `long` adds 6 bytes to the input's name (one too many),
    /// beside `otherOutputs`.
    package static func longNamedInput(in directory: TemporaryDirectory, beside otherOutputs: [String]) throws -> String {
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/\(longStem).jpg")
        let long = #"{"name": "long", "steps": [{"resize": {"width": 16}}], "encode": {"format": "jpeg"}, "path": "out/{name}-b.jpg"}"#
        return json(inputs: ["in/*.jpg"], outputs: [long] + otherOutputs)
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
