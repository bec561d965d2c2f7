import Foundation
import StandardProcessors
import Testing

@testable import PipelineKit

/// One input with many outputs: the work of loading, planning, fingerprinting and re-running
/// grows in proportion to the number of outputs, not with its square. Work is counted (bytes
/// hashed, pairs of paths compared), not timed; `Benchmarks/many-outputs.sh` shows the time.
@Suite struct ManyOutputsTests {
    /// `count` outputs of one input: half named by `{output}`, half by a `{width}` each output's
    /// resize fixes to a different value, and one whose width is not known before the run.
    func json(outputs count: Int) -> String {
        var outputs: [String] = []
        for index in 0..<count / 2 {
            outputs.append(
                #"{"name": "n\#(index)", "steps": [{"resize": {"width": \#(8 + index % 16)}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-{output}.jpg"}"#
            )
            outputs.append(
                #"{"name": "w\#(index)", "steps": [{"resize": {"width": \#(4 + index)}}], "encode": {"format": "jpeg"}, "path": "out/w/{stem}-{width}w.jpg"}"#
            )
        }
        outputs.append(#"{"name": "any", "steps": [], "encode": {"format": "jpeg"}, "path": "out/any/{stem}-{width}.jpg"}"#)
        return PipelineHarness.json(inputs: ["in/a.jpg"], outputs: outputs)
    }

    /// Runs the pipeline twice (making everything, then finding everything up to date) and
    /// returns the work counted.
    func work(outputs count: Int) async throws -> WorkCounter {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        let counter = WorkCounter()
        try await WorkCounter.$current.withValue(counter) {
            let first = try await PipelineHarness.run(json(outputs: count), in: directory).summary
            #expect(first.succeeded == 1 && first.outputsWritten == count + 1)
            let second = try await PipelineHarness.run(json(outputs: count), in: directory).summary
            #expect(second.succeeded == 1 && second.outputsUpToDate == count + 1)
        }
        return counter
    }

    @Test func workGrowsLinearlyWithTheNumberOfOutputs() async throws {
        // Given one input with 100 outputs, and then with 400
        let few = try await work(outputs: 100)
        let many = try await work(outputs: 400)
        // Then four times the outputs cost at most about four times the work in each place
        for kind in [WorkCounter.Kind.fingerprintBytes, .plannedPathPairs, .templatePairs] {
            let ratio = Double(many.count(kind)) / Double(max(few.count(kind), 1))
            #expect(few.count(kind) > 0, "\(kind) not counted")
            #expect(ratio < 5, "\(kind): \(few.count(kind)) for 100 outputs, \(many.count(kind)) for 400 (×\(ratio))")
        }
    }
}
