import Testing

@testable import PipelineKit

/// The summary's line of qualities chosen: each format's range and median, and how many files.
@Suite struct ChosenQualitiesTests {
    @Test func eachFormatGivesItsRangeMedianAndCount() {
        var chosen = ChosenQualities()
        #expect(chosen.isEmpty)
        for quality in [61, 38, 49, 52, 44] { chosen.add(format: "avif", quality: quality) }
        for _ in 0..<3 { chosen.add(format: "webp", quality: 80) }
        #expect(!chosen.isEmpty)
        #expect(chosen.description == "avif 38–61 (median 49, 5 files), webp 80 (3 files)")
    }

    @Test func anEvenCountTakesTheLowerMedianAndQualitiesOutOfRangeAreClamped() {
        var chosen = ChosenQualities()
        for quality in [10, 20, 30, 40] { chosen.add(format: "jpeg", quality: quality) }
        chosen.add(format: "jxl", quality: 0)
        chosen.add(format: "jxl", quality: 120)
        #expect(chosen.description == "jpeg 10–40 (median 20, 4 files), jxl 1–100 (median 1, 2 files)")
    }
}
