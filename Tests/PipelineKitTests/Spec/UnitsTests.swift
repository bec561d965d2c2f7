import TestSupport
import Testing

@testable import PipelineKit

@Suite struct UnitsTests {
    @Test func parsesDurations() {
        #expect(Units.seconds(in: "30s") == 30)
        #expect(Units.seconds(in: "500ms") == 0.5)
        #expect(Units.seconds(in: "2m") == 120)
        #expect(Units.seconds(in: "1.5h") == 5400)
        #expect(Units.seconds(in: "30") == nil)
        #expect(Units.seconds(in: "-1s") == nil)
        #expect(Units.seconds(in: "s") == nil)
    }

    @Test func parsesByteSizes() {
        #expect(Units.bytes(in: "50MB") == 50_000_000)
        #expect(Units.bytes(in: "1GiB") == 1_073_741_824)
        #expect(Units.bytes(in: "512 KiB") == 524_288)
        #expect(Units.bytes(in: "1024") == 1024)
        #expect(Units.bytes(in: "12XB") == nil)
        #expect(Units.bytes(in: "MB") == nil)
        // Units in either case, as docker and sharp users write them
        #expect(Units.bytes(in: "50mb") == 50_000_000)
        #expect(Units.bytes(in: "2gib") == 2_147_483_648)
        #expect(Units.bytes(in: "1TiB") == 1_099_511_627_776)
        #expect(Units.bytes(in: "64b") == 64)
        #expect(Units.bytes(in: "12xb") == nil)
        // but not in a mixed case that reads as bits
        #expect(Units.bytes(in: "5Mb") == nil)
        #expect(Units.bytes(in: "5Kb") == nil)
        #expect(Units.bytes(in: "5kiB") == nil)
        // SI writes a kilobyte kB
        #expect(Units.bytes(in: "150kB") == 150_000)
    }

    @Test func parsesColours() {
        #expect(Units.colour(in: "#fff") == [255, 255, 255, 255])
        #expect(Units.colour(in: "#00000080") == [0, 0, 0, 128])
        #expect(Units.colour(in: "#0f08") == [0, 255, 0, 136])
        #expect(Units.colour(in: "transparent") == [0, 0, 0, 0])
        #expect(Units.colour(in: "#ggg") == nil)
        #expect(Units.colour(in: "#12345") == nil)
    }

    @Test func suggestsTheNearestName() {
        #expect(NearestName.suggestion(for: "qualty", among: ["quality", "strip"]) == "quality")
        #expect(NearestName.suggestion(for: "Quality", among: ["quality"]) == "quality")
        #expect(NearestName.suggestion(for: "witdh", among: ["width", "height"]) == "width")
        #expect(NearestName.suggestion(for: "zzzzzz", among: ["width", "height"]) == nil)
    }
}

extension UnitsTests {
    @Test func absurdDurationsAreNotDurations() {
        #expect(Units.seconds(in: String(repeating: "9", count: 400) + "s") == nil)
        #expect(Units.seconds(in: "400d") == nil)
        #expect(Units.seconds(in: "8760h") == 31_536_000.0)
        #expect(Units.seconds(in: "8761h") == nil)
    }
}
