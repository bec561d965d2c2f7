import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// Decodes that cannot stream hold their full-size buffers while they run: two of the largest
/// do not decode side by side, even when they sort together (largest first), and one that holds
/// more than the whole target decodes alone.
@Suite struct UnstreamedDecodeTests {
    @Test func twoLargeProgressiveJPEGsEachDecodeAlone() throws {
        // Given two 24-megapixel progressive JPEGs (72 MB of coefficients each, together over the
        // 64 MB target) and forty small baseline ones, decoded two at a time.
        let directory = try TemporaryDirectory()
        // Noise enlarged eight times: made quickly, with enough detail to take a while to decode.
        let large = try Fixtures.noise(width: 750, height: 500).resized(horizontalScale: 8, verticalScale: 8, kernel: .linear)
            .encoded(suffix: ".jpg[Q=80,interlace]")
        try directory.write(large, to: "in/large-1.jpg")
        try directory.write(large, to: "in/large-2.jpg")
        let small = try Fixtures.jpeg(try Fixtures.gradient(width: 1000, height: 800))
        for index in 0..<40 { try directory.write(small, to: "in/small-\(index).jpg") }
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*.jpg"],
                    outputs: [
                        #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
                    ],
                    extra: #""incremental": false, "decompress": {"concurrency": 2}"#
                ).utf8), to: "p.json")

        // When it runs (largest first: both large ones would start together).
        let trace = directory.url.appendingPathComponent("trace.json").path
        let result = try CommandRunner.run(["run", "--trace", trace, directory.url.appendingPathComponent("p.json").path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 42)

        // Then each large one, holding more than the target by itself, decodes alone: not beside
        // the other, nor beside the small ones, which decode before, between and after them.
        let decodes = try Self.decodeSpans(trace)
        let first = try #require(decodes["in/large-1.jpg"]), second = try #require(decodes["in/large-2.jpg"])
        #expect(!first.overlaps(second), "large decodes \(first) and \(second) overlap")
        let besideLarge = decodes.filter { $0.key.hasPrefix("in/small-") && ($0.value.overlaps(first) || $0.value.overlaps(second)) }
        #expect(besideLarge.isEmpty, "decoded beside a large one: \(besideLarge.keys.sorted())")
        #expect(decodes.keys.filter { $0.hasPrefix("in/small-") }.count == 40)
    }

    /// Each input's decompress operation, as seconds from the trace (Chrome Trace Event format).
    private static func decodeSpans(_ path: String) throws -> [String: ClosedRange<Double>] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        let events = (object as? [String: Any])?["traceEvents"] as? [[String: Any]] ?? object as? [[String: Any]] ?? []
        var spans: [String: ClosedRange<Double>] = [:]
        for event in events where event["cat"] as? String == "decompress" {
            guard let input = (event["args"] as? [String: Any])?["input"] as? String,
                let start = event["ts"] as? Double, let duration = event["dur"] as? Double
            else { continue }
            spans[input] = (start / 1e6)...((start + duration) / 1e6)
        }
        return spans
    }
}
