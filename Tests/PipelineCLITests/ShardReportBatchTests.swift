import Foundation
import TestSupport
import Testing

/// `merge-reports` joins only the reports of one batch: each shard's report records the
/// settings and the names of every input of its run, and a report left from an earlier run over
/// other inputs, or one of an edited pipeline file, is refused, where it was joined with exit 0
/// and the batch passed for whole.
@Suite struct ShardReportBatchTests {
    /// Runs shard `index` of 2 of `file` with its report in `reports/INDEX`.
    func runShard(_ index: Int, of file: String, in directory: TemporaryDirectory) throws {
        let report = directory.path + "/reports/\(index)"
        let result = try CommandRunner.run(["run", "--quiet", "--force", "--shard", "\(index)/2", "--report", report, file])
        #expect(result.status == 0, "\(result.standardError)")
    }

    func merge(_ directory: TemporaryDirectory) throws -> CommandRunner.Result {
        try CommandRunner.run(
            ["merge-reports", "--output", directory.path + "/merged-\(UUID().uuidString)"]
                + (0..<2).map { directory.path + "/reports/\($0)" })
    }

    func pipeline(width: Int) -> String {
        #"{"version": 1, "name": "site", "inputs": ["in/*.jpg"], "outputs": [{"name": "t", "steps": [{"resize": {"width": \#(width)}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}]}"#
    }

    func photos(_ range: Range<Int>, in directory: TemporaryDirectory) throws {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in range { try directory.write(photo + Data("\(index)".utf8), to: "in/p\(index).jpg") }
    }

    @Test func aReportLeftFromAnEarlierBatchIsRefused() throws {
        // Given a batch of 8 photos in two shards, whose reports merge
        let directory = try TemporaryDirectory()
        try photos(0..<8, in: directory)
        let file = try directory.write(Data(pipeline(width: 16).utf8), to: "p.json")
        for index in 0..<2 { try runShard(index, of: file, in: directory) }
        let whole = try merge(directory)
        #expect(whole.status == 0, "\(whole.standardError)")
        #expect(whole.standardOutput.contains("8 inputs"), "\(whole.standardOutput)")

        // When 8 more photos come and only shard 0 runs again (shard 1's task died before its report)
        try photos(8..<16, in: directory)
        try runShard(0, of: file, in: directory)

        // Then the old report of shard 1 is not joined with the new one of shard 0
        let stale = try merge(directory)
        #expect(stale.status == 2, "\(stale.standardOutput)\(stale.standardError)")
        #expect(stale.standardError.contains("are of runs over other inputs"), "\(stale.standardError)")
        // and once shard 1 runs again, the batch is whole
        try runShard(1, of: file, in: directory)
        let again = try merge(directory)
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains("16 inputs"), "\(again.standardOutput)")
    }

    @Test func reportsOfAnEditedPipelineFileAreRefused() throws {
        // Given shard 0 run with one version of the file, and shard 1 with an edited one
        let directory = try TemporaryDirectory()
        try photos(0..<8, in: directory)
        let file = try directory.write(Data(pipeline(width: 16).utf8), to: "p.json")
        try runShard(0, of: file, in: directory)
        try directory.write(Data(pipeline(width: 24).utf8), to: "p.json")
        try runShard(1, of: file, in: directory)

        // When their reports are merged, then they are refused as of two versions of the file
        let merged = try merge(directory)
        #expect(merged.status == 2, "\(merged.standardOutput)\(merged.standardError)")
        #expect(merged.standardError.contains("are of runs with other settings (the pipeline file changed"), "\(merged.standardError)")
    }
}
