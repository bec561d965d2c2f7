import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// A shard stopped part-way writes a manifest of what it finished, which says so: joined, it
/// would leave out the inputs it did not reach.
@Suite struct ShardRunRecordTests {
    @Test func aShardStoppedPartWayIsNotJoined() async throws {
        // Given eight photos in one shard, with a manifest
        let directory = try TemporaryDirectory()
        for index in 0..<8 {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 200 + index, height: 150)), to: "in/p\(index).jpg")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "t", "steps": [{"resize": {"width": 64}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}, "inFlight": 1"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let shard = try Shard(index: 0, count: 1)
        // When its run is stopped once its first input is done
        let run = try pipeline.run(shard: shard)
        var finished = 0
        for await event in run {
            if case .itemCompleted = event {
                finished += 1
                if finished == 1 { run.cancel() }
            }
        }
        let settings = try #require(pipeline.definition.manifest)
        let written = try ImageManifest.read(from: settings.forShard(shard).file)
        #expect(written.inputs.count < 8, "the run was not stopped before its end: the test proves nothing")
        // Then its manifest says so, and the merge refuses it, naming the shard to run again
        #expect(written.shard?.finished == false)
        let current = ShardManifests.CurrentInputs(plan: try pipeline.plan(), count: 1)
        #expect {
            try ShardManifests.find(beside: settings).write(pipeline: pipeline.definition.name, current: current)
        } throws: { error in
            let failure = error as? ShardManifests.Failure
            return failure?.isStale == true
                && failure?.description.contains("its run was stopped before it had been through its inputs") == true
        }
        #expect(!FileManager.default.fileExists(atPath: settings.file.path))
        // and a whole run of the shard is joined
        _ = try await pipeline.run(shard: shard).collect()
        #expect(try ImageManifest.read(from: settings.forShard(shard).file).shard?.finished == true)
        #expect(try ShardManifests.find(beside: settings).write(pipeline: pipeline.definition.name, current: current) == 8)
    }
}
