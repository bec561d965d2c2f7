import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The memory budget as `pipeline explain` states it, under a limit a shell sets.
@Suite struct MemoryBudgetCommandTests {
    @Test func explainShowsTheBudgetAndWhereItCameFrom() throws {
        // A child process under `ulimit -v` (RLIMIT_AS), as a container or a shell would set it
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        guard let explain = try CommandRunner.runUnderAddressSpaceLimit(kilobytes: 2_000_000, ["explain", file]) else { return }
        #expect(
            explain.output.contains("memory budget: ") && explain.output.contains("of a 2048 MB limit from RLIMIT_AS (ulimit -v)"),
            "\(explain.output)")
    }
}
