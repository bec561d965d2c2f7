import Foundation

/// Joins the reports of a sharded run's shards into one report, and says which shards are
/// missing: what `pipeline merge-reports` does after a scheduler's array of tasks.
public enum ReportMerger {
    /// A set of reports that cannot be joined.
    public struct MergeError: Error, Sendable, CustomStringConvertible {
        /// Why the reports cannot be joined.
        public let description: String
    }

    /// The joined report (no `shard`), and the shard indices of which no report was given.
    ///
    /// - Parameters:
    ///   - reports: the shards' reports.
    ///   - names: what errors call each report (the path it was read from); "report N" for
    ///     one without a name.
    /// - Throws: when a report is not of a shard, the reports disagree on the pipeline, the
    ///   shard count or the batch (the settings, or the inputs of the whole run), two reports
    ///   are of one shard, or one input is in two reports.
    public static func merge(_ reports: [RunReport], named names: [String] = []) throws(MergeError) -> (
        report: RunReport, missingShards: [Int]
    ) {
        guard let first = reports.first else { throw MergeError(description: "no reports to merge") }
        let seen = try shardPositions(reports, first: first) { position in
            position < names.count ? names[position] : "report \(position + 1)"
        }
        try checkEachInputInOneShard(reports)
        let count = first.shard?.count ?? 1
        let missing = (0..<count).filter { seen[$0] == nil }

        let start = reports.map(\.startedAt).min() ?? first.startedAt
        let end = reports.map { $0.startedAt.addingTimeInterval($0.elapsedSeconds) }.max() ?? start
        func sum(_ value: (RunReport) -> Int) -> Int { reports.reduce(0) { $0 + value($1) } }
        var merged = RunReport(
            pipeline: first.pipeline, version: first.version, startedAt: start, elapsedSeconds: end.timeIntervalSince(start),
            inputs: sum(\.inputs), succeeded: sum(\.succeeded), failed: sum(\.failed), notRun: sum(\.notRun),
            outputsWritten: sum(\.outputsWritten), outputsUpToDate: sum(\.outputsUpToDate),
            cancelled: reports.contains(where: \.cancelled),
            stages: mergedStages(reports),
            items: reports.flatMap(\.items).sorted { RunReport.inputPrecedes($0.input, $1.input) })
        // Said in the report itself: one read without the command's exit status or its words
        // (a dashboard, the page) must not pass for the whole run.
        if !missing.isEmpty { merged.missingShards = missing }
        // Each shard plans the whole run's inputs, so each gives the plan's warnings.
        var seenWarnings = Set<String>()
        let warnings = reports.flatMap { $0.warnings ?? [] }.filter { seenWarnings.insert($0).inserted }
        if !warnings.isEmpty { merged.warnings = warnings }
        return (merged, missing)
    }

    /// Each shard's position among `reports`, once each shard is known to be of `first`'s
    /// pipeline and shard count, and given once; `name` says which report an error is of.
    private static func shardPositions(_ reports: [RunReport], first: RunReport, name: (Int) -> String) throws(MergeError) -> [Int: Int] {
        var seen: [Int: Int] = [:]
        // The first report that records its batch, which each later one is compared with.
        let reference = reports.indices.lazy.compactMap { index in reports[index].shard?.batch.map { (index, $0) } }.first
        for (position, report) in reports.enumerated() {
            guard let shard = report.shard else {
                throw MergeError(description: "\(name(position)) is not of a shard (run with --shard or under a scheduler)")
            }
            guard report.pipeline == first.pipeline else {
                throw MergeError(description: "\(name(position)) is of pipeline \"\(report.pipeline)\", not \"\(first.pipeline)\"")
            }
            guard shard.count == first.shard?.count else {
                throw MergeError(
                    description:
                        "\(name(position)) is shard \(shard.index)/\(shard.count), but \(name(0)) is of \(first.shard?.count ?? 0) shards")
            }
            // Reports of versions before it record no batch, and are joined as they were.
            if let batch = shard.batch, let (other, firstBatch) = reference, other < position {
                if batch.settings != firstBatch.settings {
                    throw MergeError(
                        description: "\(name(position)) and \(name(other)) are of runs with other settings (the pipeline file "
                            + "changed between them): run every shard again")
                }
                if batch.inputs != firstBatch.inputs {
                    throw MergeError(
                        description: "\(name(position)) and \(name(other)) are of runs over other inputs (one added, removed or "
                            + "renamed between them, or a report left from an earlier batch): run every shard again")
                }
            }
            if let earlier = seen[shard.index] {
                throw MergeError(description: "\(name(earlier)) and \(name(position)) are both of shard \(shard.index)/\(shard.count)")
            }
            seen[shard.index] = position
        }
        return seen
    }

    /// Throws when one input is in the reports of two shards: the reports are of different runs.
    private static func checkEachInputInOneShard(_ reports: [RunReport]) throws(MergeError) {
        // By their bytes: names that differ only in their Unicode form are two inputs.
        var owner: [DiskPath: Int] = [:]
        for report in reports {
            for item in report.items {
                let index = report.shard?.index ?? 0
                if let other = owner[DiskPath(item.input)], other != index {
                    throw MergeError(
                        description: "the input \(item.input) is in shards \(other) and \(index): the reports are of different runs")
                }
                owner[DiskPath(item.input)] = index
            }
        }
    }

    /// Each stage's totals over the reports, in the order the stages first appear: the widest
    /// concurrency, and the operations and times added up.
    private static func mergedStages(_ reports: [RunReport]) -> [RunReport.StageTotals] {
        var stages: [Stage: RunReport.StageTotals] = [:]
        var stageOrder: [Stage] = []
        for report in reports {
            for totals in report.stages {
                if var merged = stages[totals.stage] {
                    merged.concurrency = max(merged.concurrency, totals.concurrency)
                    merged.operations += totals.operations
                    merged.busySeconds += totals.busySeconds
                    merged.waitSeconds += totals.waitSeconds
                    stages[totals.stage] = merged
                } else {
                    stages[totals.stage] = totals
                    stageOrder.append(totals.stage)
                }
            }
        }
        return stageOrder.compactMap { stages[$0] }
    }

    /// Reads a `report.json` (from a folder `ReportWriter` wrote, or the file itself).
    public static func read(_ url: URL) throws -> RunReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(RunReport.self, from: RegularFile.contents(of: reportFile(at: url).path))
    }

    /// The `report.json` that `read(_:)` reads for `url`: the one in it, when it is a folder.
    public static func reportFile(at url: URL) -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else { return url }
        return url.appendingPathComponent(ReportWriter.jsonFileName)
    }
}
