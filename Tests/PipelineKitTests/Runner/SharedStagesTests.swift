import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Runs given one `SharedStages` go through one set of stage queues and one committer: the
/// file's stage widths bound them together, as they bound one batch run.
@Suite struct SharedStagesTests {
    static let thumb = SharedMemoryBudgetTests.thumb

    @Test func runsAtOnceGoThroughOneSetOfQueuesAndReportNoOperationOfThem() async throws {
        let directory = try TemporaryDirectory()
        for name in ["a", "b", "c"] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/\(name).jpg")
        }
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb], extra: #""decompress": {"concurrency": 1}"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let plan = try pipeline.plan()
        let stages = SharedStages(pipeline)

        // When three runs of one input each go at once, sharing the stages
        let events = await withTaskGroup(of: [PipelineEvent].self) { group in
            for name in ["a.jpg", "b.jpg", "c.jpg"] {
                let one = plan.keeping { $0.input.fileName == name }
                group.addTask { await pipeline.run(one, stages: stages).reduce(into: []) { $0.append($1) } }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }

        // Then every input was decoded and encoded on the shared queues, one decode at a time
        let reports = events.compactMap { if case .itemCompleted(let report) = $0 { report } else { nil } }
        #expect(reports.count == 3 && reports.allSatisfy(\.succeeded), "\(reports)")
        #expect(stages.counts[.decompress] == StageCounts(queued: 0, running: 0, done: 3))
        #expect(stages.counts[.encode]?.done == 3)
        // and no run reports an operation of the queues it shares
        #expect(!events.contains { if case .stageFinished = $0 { true } else { false } })
        for name in ["a", "b", "c"] { #expect(FileManager.default.fileExists(atPath: directory.path + "/out/\(name).png")) }
    }
}
