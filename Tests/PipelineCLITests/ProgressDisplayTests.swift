import PipelineKit
import Testing

@testable import PipelineCLI

/// The plain progress line (a log, CI) says where the run's work is, and stays on one stage
/// while two hold as much.
@Suite struct ProgressDisplayTests {
    @Test func thePlainLineNamesTheStageWithTheMostQueuedElseTheMostRunning() {
        #expect(ProgressDisplay.busiest([.fetch: StageCounts(queued: 2), .encode: StageCounts(queued: 5)]) == "most queued: encode")
        // A tie goes to the earlier stage, whatever order the counts come in
        for _ in 0..<20 {
            let tied: [Stage: StageCounts] = [
                .process: StageCounts(queued: 3, running: 1), .fetch: StageCounts(queued: 3), .encode: StageCounts(running: 2),
            ]
            #expect(ProgressDisplay.busiest(tied) == "most queued: fetch")
        }
        // One long encode, nothing waiting: the line says so, rather than any stage with none queued
        let oneEncode: [Stage: StageCounts] = [
            .fetch: StageCounts(done: 1), .process: StageCounts(done: 1), .encode: StageCounts(running: 1),
        ]
        #expect(ProgressDisplay.busiest(oneEncode) == "none queued, running: encode")
        #expect(ProgressDisplay.busiest([:]) == "none queued")
    }
}
