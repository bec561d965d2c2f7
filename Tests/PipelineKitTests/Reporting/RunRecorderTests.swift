import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The recorder keeps each input's part of the report and each operation's part of the trace on
/// disk, and writes from there the files its whole report would give.
@Suite struct RunRecorderTests {
    @Test func theRecorderWritesTheFilesItsWholeReportGives() async throws {
        // Given a run with a good input, a failed output and a broken input, recorded
        let directory = try TemporaryDirectory()
        let (recorder, pipeline) = try await ReportWriterTests.runWithFailures(in: directory)
        let base = pipeline.definition.baseDirectory
        // When its report is written from the recorder, and from the report read back whole
        let streamed = directory.url.appendingPathComponent("streamed")
        let whole = directory.url.appendingPathComponent("whole")
        try await ReportWriter.write(recorder, to: streamed, inputDirectory: base)
        try await ReportWriter.write(try recorder.report, to: whole, inputDirectory: base)
        // Then both folders hold the same two files, byte for byte
        for name in [ReportWriter.jsonFileName, ReportWriter.htmlFileName] {
            let first = try Data(contentsOf: streamed.appendingPathComponent(name))
            #expect(first == (try Data(contentsOf: whole.appendingPathComponent(name))), "\(name)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: streamed.path).sorted() == ["index.html", "report.json"])
        // And the report has every input, with the seconds each worked
        let report = try recorder.report
        #expect(report.items.count == 3)
        let good = try #require(report.items.first { $0.input == "good.jpg" })
        #expect((good.stageSeconds["decompress"] ?? 0) > 0)
        #expect(report.stages.first { $0.stage == .decompress }?.operations == 3)
    }

    @Test func aRunWithNoInputsHasAReportWithNoItems() async throws {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(inputs: ["none/*.jpg"], outputs: ReportWriterTests.twoOutputs, extra: #""allowEmpty": true"#)
        let recorder = try await ReportWriterTests.record(try PipelineHarness.pipeline(json, in: directory))
        let report = try recorder.report
        #expect(report.items.isEmpty && report.inputs == 0)
        #expect(try recorder.reportJSON() == ReportWriter.encodedJSON(report))
        // And its trace has no events
        let trace = try JSONSerialization.jsonObject(with: recorder.traceJSON()) as? [String: Any]
        #expect((trace?["traceEvents"] as? [Any])?.isEmpty == true)
    }

    @Test func theTraceHasASliceForEveryOperation() async throws {
        let directory = try TemporaryDirectory()
        let (recorder, _) = try await ReportWriterTests.runWithFailures(in: directory)
        // A folder that is not there yet is made, as the report's is
        let path = directory.url.appendingPathComponent("traces/new/trace.json").path
        try recorder.writeTrace(to: path)
        let trace = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(trace["displayTimeUnit"] as? String == "ms")
        let events = try #require(trace["traceEvents"] as? [[String: Any]])
        let slices = events.filter { $0["ph"] as? String == "X" }
        let report = try recorder.report
        #expect(slices.count == report.stages.reduce(0) { $0 + $1.operations })
        #expect(
            slices.contains { $0["cat"] as? String == "decompress" && ($0["args"] as? [String: Any])?["input"] as? String == "good.jpg" })
        // Every track a slice is on is named once
        let named = events.filter { $0["name"] as? String == "thread_name" }.compactMap { $0["tid"] as? Int }
        #expect(Set(named).count == named.count)
        #expect(Set(slices.compactMap { $0["tid"] as? Int }).isSubset(of: Set(named)))
    }

    @Test func aRecorderThatKeepsNoTraceSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(inputs: ["none/*.jpg"], outputs: ReportWriterTests.twoOutputs, extra: #""allowEmpty": true"#)
        let recorder = try RunRecorder(definition: try PipelineHarness.pipeline(json, in: directory).definition, keepsTrace: false)
        #expect(throws: ReportWriterError.self) { try recorder.traceJSON() }
    }

    @Test func theRunsWarningsAreInTheReportOnThePageAndInAMergedReport() async throws {
        // Given a folder whose glob skips an entry it cannot take (a FIFO)
        let directory = try TemporaryDirectory()
        try directory.write(Fixtures.jpeg(Fixtures.gradient(width: 120, height: 80)), to: "photos/good.jpg")
        #expect(mkfifo(directory.url.appendingPathComponent("photos/pipe.jpg").path, 0o600) == 0)
        let json = PipelineHarness.json(inputs: ["photos/*.jpg"], outputs: ReportWriterTests.twoOutputs)
        // When it runs, recorded
        let recorder = try await ReportWriterTests.record(try PipelineHarness.pipeline(json, in: directory))
        // Then the report says what was skipped, though every input it took succeeded
        let report = try recorder.report
        #expect(report.succeeded == 1 && report.failed == 0)
        let warning = try #require(report.warnings?.first)
        #expect(warning.hasPrefix(#"input "photos/*.jpg" skips 1 entry it cannot take as an input"#), "\(warning)")
        #expect(String(decoding: try recorder.reportJSON(), as: UTF8.self).contains("skips 1 entry"))
        // And so does the page
        let page = HTMLReport(report: report, inputDirectory: nil).render()
        #expect(page.contains("<h2>Warnings</h2>") && page.contains("skips 1 entry"))
        // And a merge of two shards that both planned the run says it once
        var first = report
        first.shard = RunReport.ShardInfo(index: 0, count: 2)
        var second = first
        second.shard = RunReport.ShardInfo(index: 1, count: 2)
        second.items = []
        let merged = try ReportMerger.merge([first, second]).report
        #expect(merged.warnings == [warning])
    }

    /// Items as a run of thousands gives them: every tenth failed, names with numbers.
    func items(_ count: Int) -> [RunReport.Item] {
        (0..<count).map { index in
            let failed = index % 10 == 3
            return RunReport.Item(
                input: "in/photo-\((index * 7919) % count).jpg", status: failed ? .failed : .succeeded,
                error: failed && index % 20 == 3 ? "broken" : nil, stage: failed ? .decompress : nil, width: 10, height: 10,
                bytes: 100, stageSeconds: [:],
                outputs: [
                    RunReport.Output(
                        name: "t", path: failed ? nil : "out/\(index).jpg", status: failed ? .failed : .succeeded,
                        error: failed ? "cannot write" : nil, stage: failed ? .encode : nil, step: nil, width: nil, height: nil,
                        bytes: nil, format: "jpeg", upToDate: nil)
                ])
        }
    }

    @Test func thePageOfManyItemsIsTheirFirstCardsAndFailures() {
        // Given more items than twice the page, given one at a time
        let all = items(2 * HTMLReport.maxCards + 537)
        var selection = HTMLReport.Selection()
        for item in all { selection.add(item) }
        let page = selection.page
        // Then the page holds the first cards of them all sorted, and counts them all
        let expected = all.sorted(by: HTMLReport.cardPrecedes).prefix(HTMLReport.maxCards)
        #expect(page.cards.map(\.input) == expected.map(\.input))
        #expect(page.itemCount == all.count)
        // And the failures: one row per failed input (its error, or its failed output), by input
        #expect(page.failureCount == all.filter { $0.status == .failed }.count)
        #expect(page.failures.count == min(HTMLReport.maxCards, page.failureCount))
        let inputs = page.failures.map(\.input)
        #expect(inputs == inputs.sorted(by: RunReport.inputPrecedes))
        #expect(page.failures.contains { $0.output == nil && $0.reason == "broken" })
        #expect(page.failures.contains { $0.output == "t" && $0.reason == "cannot write" })
    }

    /// One order for one set of names, whatever order they come in: numbers as numbers, case
    /// ignored, and names equal so by their bytes.
    @Test func inputsAreOrderedAsPeopleReadNamesAndEveryNameHasOnePlace() {
        let names = ["photo-10.jpg", "b.png", "A.png", "photo-01.jpg", "a.png", "photo-2.jpg", "photo-1.jpg", "B.png"]
        let expected = ["A.png", "a.png", "B.png", "b.png", "photo-01.jpg", "photo-1.jpg", "photo-2.jpg", "photo-10.jpg"]
        #expect(names.sorted(by: RunReport.inputPrecedes) == expected)
        #expect(names.reversed().sorted(by: RunReport.inputPrecedes) == expected)
    }
}
