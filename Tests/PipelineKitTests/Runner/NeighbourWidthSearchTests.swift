import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The widths of one output search one after another from the quality a neighbouring width
/// chose: fewer trial encodes than searches that each guess from the image.
@Suite struct NeighbourWidthSearchTests {
    static let photo = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/storm.jpg")

    /// The trial encodes of each width's search (by width) when one output makes `widths` in
    /// `format` for `score`, one encode at a time and with no journal to start from.
    func searchEncodes(widths: [Int], format: String, score: Double) async throws -> [Int: Int] {
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg")
        let list = widths.map(String.init).joined(separator: ", ")
        let text = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "web", "widths": [\#(list)], "encode": {"format": "\#(format)", "quality": {"ssimulacra2": \#(score), "min": 10}}, "path": "out/{stem}-{width}.\#(format)"}"#
            ], extra: #""incremental": false, "encode": {"concurrency": 1}"#)
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.failed == 0)
        var encodes: [Int: Int] = [:]
        for written in reports.flatMap(\.written) {
            #expect(written.searchEncodes != nil, "\(written.path) has no search")
            encodes[written.size.width] = written.searchEncodes
        }
        #expect(encodes.count == widths.count, "\(encodes)")
        return encodes
    }

    /// Two close widths made together take fewer trial encodes than each made alone, over
    /// several targets: whichever width encodes second starts from the first one's choice,
    /// which is usually its own again (a search that guesses right alone has nothing to save,
    /// and one started a step off may take as many trials, so the targets are summed).
    @Test(arguments: ["jpeg", "webp"])
    func aSecondWidthStartsFromTheFirstWidthsChoice(format: String) async throws {
        var (alone, together) = (0, 0)
        var seen: [String] = []
        for score in [55.0, 65, 75, 85] {
            let narrow = try await searchEncodes(widths: [600], format: format, score: score)[600] ?? 0
            let wide = try await searchEncodes(widths: [610], format: format, score: score)[610] ?? 0
            let both = try await searchEncodes(widths: [600, 610], format: format, score: score)
            alone += narrow + wide
            together += both.values.reduce(0, +)
            seen.append("target \(score): together \(both), alone 600: \(narrow), 610: \(wide)")
        }
        #expect(together < alone, "\(seen)")
    }
}
