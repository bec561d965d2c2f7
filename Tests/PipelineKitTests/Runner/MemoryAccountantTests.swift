import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The run's memory account: every allowance derived from the budget in one place, the decoder
/// given the run's own, and `explain` printing it as one table.
@Suite struct MemoryAccountantTests {
    /// The allowances, in the order the account lists them.
    static let names = ["run admission", "PNGs read whole", "read-ahead", "unstreamed decodes", "windowed decodes"]
    static let heading = "memory account (what the run's memory holds, who may take what, and why):"

    @Test func everyAllowanceIsDerivedFromTheBudget() throws {
        // Without a budget: no admission, and every allowance at its ceiling
        let unbudgeted = MemoryAccountant(budget: nil)
        #expect(unbudgeted.admission == nil)
        #expect(unbudgeted.wholePNGReads.capacity == 128_000_000)
        #expect(unbudgeted.readAhead == StripTIFF.defaultReadAhead)
        #expect(unbudgeted.unstreamedDecodes.capacity == 64_000_000 && unbudgeted.unstreamedDecodes.policy == .soft(overflowAt: 16))
        #expect(unbudgeted.windowedDecodeMinimum == 150_000_000)

        // Under a 320 MB budget: the admission is the budget, PNGs read whole an eighth of it,
        // one image's read-ahead a sixteenth, windows from half of it (capped at 150 MB)
        let budget = MemoryBudget(bytes: 320_000_000, limit: 500_000_000, source: "--max-memory")
        let account = MemoryAccountant(budget: budget)
        #expect(account.admission?.capacity == 320_000_000)
        #expect(account.wholePNGReads.capacity == 40_000_000)
        #expect(account.readAhead == 20_000_000)
        #expect(account.unstreamedDecodes.capacity == 64_000_000)
        #expect(account.windowedDecodeMinimum == 150_000_000)

        // Under a small one, each share is below its ceiling
        let small = MemoryAccountant(budget: MemoryBudget(bytes: 160_000_000, limit: 300_000_000, source: "--max-memory"))
        #expect(small.wholePNGReads.capacity == 20_000_000 && small.readAhead == 10_000_000 && small.windowedDecodeMinimum == 80_000_000)
    }

    @Test func theDecoderTakesTheRunsAllowancesAndRunsDoNotShareThem() throws {
        let account = MemoryAccountant(budget: MemoryBudget(bytes: 320_000_000, limit: 500_000_000, source: "--max-memory"))
        let decoder = ImageDecoder(settings: DecoderTests.settings, outputs: [], accountant: account, encodeLanes: 1)
        #expect(decoder.wholePNGAllowance === account.wholePNGReads)
        #expect(decoder.fullSizeDecodes === account.unstreamedDecodes)
        #expect(decoder.readAhead == account.readAhead && decoder.windowedDecodeMinimum == account.windowedDecodeMinimum)

        // Another run's allowance for PNGs read whole is its own: one full leaves the other room
        let other = MemoryAccountant(budget: nil)
        #expect(account.wholePNGReads.admitNow(account.wholePNGReads.capacity))
        #expect(other.wholePNGReads.admitNow(other.wholePNGReads.capacity))
        account.wholePNGReads.release(account.wholePNGReads.capacity)
        other.wholePNGReads.release(other.wholePNGReads.capacity)
    }

    /// A PNG read whole holds its full-size rows as a decode that cannot stream does: it is read
    /// whole only while the run's unstreamed decodes have room for it too, and holds that room
    /// while it is read, so that it and a large progressive JPEG's decode do not meet (by chance,
    /// and more often the more inputs a run has).
    @Test func aPNGIsReadWholeOnlyBesideRoomInTheUnstreamedDecodes() throws {
        let png = try Fixtures.gradient(width: 300, height: 200, bands: 4).encoded(suffix: ".png[filter=all]")
        let directory = try TemporaryDirectory()
        let path = try directory.write(png, to: "input.png")
        let source = EncodedSource.file(path: path, byteCount: Int64(png.count))
        let rowsAndFile = Int64((300 * 4 + 1) * 200 + png.count)

        // A large progressive decode holds the unstreamed decodes past their target: the PNG streams.
        let busy = MemoryAccountant(budget: nil)
        let large = busy.unstreamedDecodes.capacity + 1
        #expect(busy.unstreamedDecodes.admitNow(large))
        let streamed = try ImageDecoder(settings: DecoderTests.settings, outputs: [], accountant: busy, encodeLanes: 1).decode(source)
        #expect(busy.unstreamedDecodes.peakAdmitted == large, "read whole beside a decode over the target")
        busy.unstreamedDecodes.release(large)

        // With room, it is read whole and counted in both, and gives both back when done.
        let idle = MemoryAccountant(budget: nil)
        let whole = try ImageDecoder(settings: DecoderTests.settings, outputs: [], accountant: idle, encodeLanes: 1).decode(source)
        #expect(idle.wholePNGReads.peakAdmitted == rowsAndFile)
        #expect(idle.unstreamedDecodes.peakAdmitted == rowsAndFile, "a PNG read whole left out of the unstreamed decodes")
        #expect(idle.unstreamedDecodes.admitNow(idle.unstreamedDecodes.capacity), "the read kept its room")
        idle.unstreamedDecodes.release(idle.unstreamedDecodes.capacity)
        #expect(try whole.image.bytes() == streamed.image.bytes())
    }

    /// A progressive JPEG well under a megabyte may hold tens of megabytes while it decodes: its
    /// header is read, and its decode waits aside for the unstreamed decodes like a larger file's.
    @Test func aSmallProgressiveJPEGCountsAmongTheUnstreamedDecodes() throws {
        let jpeg = try Fixtures.gradient(width: 3000, height: 2000).encoded(suffix: ".jpg[Q=90,interlace=true]")
        let held = DecodeMemoryEstimate.unstreamedDecodeBytes(try VipsImage.open(data: jpeg))
        #expect(jpeg.count < 1 << 20 && held > 15_000_000, "not a small file that holds much: \(jpeg.count) bytes, \(held) held")
        #expect(MemoryAccountant.checksUnstreamed(fileBytes: Int64(jpeg.count)))
        #expect(!MemoryAccountant.checksUnstreamed(fileBytes: 4_000), "a tiny image's header is read twice")
        #expect(!MemoryAccountant.checksUnstreamed(fileBytes: nil))
    }

    /// `explain` prints the account as one table: a line an allowance, its size and who may
    /// take it in aligned columns, and why.
    @Test func explainPrintsTheAccountAsOneTable() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 800, height: 600)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
            ])
        let plan = try PipelineHarness.pipeline(json, in: directory).plan()
        let budget = MemoryBudget(bytes: 320_000_000, limit: 500_000_000, source: "--max-memory")

        let explanation = PlanExplanation(plan: plan, memoryBudget: budget)

        #expect(explanation.memoryAccount.map(\.name) == Self.names)
        #expect(explanation.memoryAccount.map(\.bytes) == [320_000_000, 40_000_000, 20_000_000, 64_000_000, 150_000_000])
        let lines = explanation.text.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex(of: Self.heading), "\(lines)")
        let rows = Array(lines[(heading + 1)...].prefix(5))
        let expected: [(name: String, size: String, why: String)] = [
            ("run admission", "320 MB", "the whole budget (320 MB for images of a 500 MB limit from --max-memory)"),
            ("PNGs read whole", "40 MB", "1/8 of the budget, 128 MB at most: estimates leave these reads out"),
            ("read-ahead", "20 MB", "1/16 of the budget, 50 MB at most: counted in its input's estimate"),
            ("unstreamed decodes", "64 MB", "a target, not a limit"),
            ("windowed decodes", "150 MB", "1/2 of the budget, 150 MB at most"),
        ]
        for (row, want) in zip(rows, expected) {
            #expect(row.hasPrefix("  \(want.name) ") && row.contains(" \(want.size)  ") && row.contains(want.why), "\(row)")
        }
        // The columns line up: every size ends where the others do
        let sizeEnds = zip(rows, expected).compactMap { row, want in
            row.range(of: " \(want.size)  ").map { row.distance(from: row.startIndex, to: $0.upperBound) }
        }
        #expect(sizeEnds.count == 5 && Set(sizeEnds).count == 1, "\(rows)")

        // Without a budget, nothing bounds the admission, and each allowance says what a budget would make of it
        let unbudgeted = PlanExplanation(plan: plan, memoryBudget: nil).text
        #expect(
            unbudgeted.split(separator: "\n").contains {
                $0.hasPrefix("  run admission ") && $0.contains(" none  ") && $0.contains("no memory budget is set")
            }, "\(unbudgeted)")
        #expect(unbudgeted.contains("128 MB with no budget (1/8 of one at most)"))
    }

    /// The command prints the account of the budget it finds, with the figures derived from it.
    @Test func theCommandPrintsTheAccountOfTheRealBudget() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 800, height: 600)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
            ])
        try directory.write(Data(json.utf8), to: "p.json")
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.configuration.maxMemory = 400_000_000
        let budget = try #require(pipeline.memoryBudget())

        let account = try pipeline.explain().memoryAccount

        #expect(account.first?.bytes == budget.bytes)
        #expect(account.first { $0.name == "PNGs read whole" }?.bytes == min(128_000_000, budget.bytes / 8))
        #expect(account.first { $0.name == "read-ahead" }?.bytes == min(Int64(StripTIFF.defaultReadAhead), budget.bytes / 16))
        #expect(account.first { $0.name == "windowed decodes" }?.bytes == min(150_000_000, budget.bytes / 2))
        let printed = try CommandRunner.run(["explain", "--max-memory", "400MB", directory.url.appendingPathComponent("p.json").path])
        #expect(printed.status == 0, "\(printed.standardError)")
        let lines = printed.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains(Self.heading), "\(lines)")
        for name in Self.names {
            #expect(lines.filter { $0.hasPrefix("  \(name) ") }.count == 1, "\(name): \(lines)")
        }
    }
}
