import Foundation
import TestSupport
import Testing

/// A run keeps nothing per input: after 60 distinct inputs (several outputs each, a failure
/// among them), no libvips image is left alive. Run in a process of its own, since the count
/// is process-wide and other tests make images meanwhile.
@Suite struct MemoryRetentionTests {
    @Test func noImageOutlivesTheRunWhateverTheNumberOfInputs() throws {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200))
        for index in 0..<60 {
            // Distinct bytes per file, so nothing coalesces
            var data = photo
            data.append(contentsOf: Array("\(index)".utf8))
            try directory.write(data, to: "in/photo-\(index).jpg")
        }
        try directory.write(Data("not an image".utf8), to: "in/broken.jpg")
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg"], "outputs": [
                  {"name": "a", "steps": [{"resize": {"width": 64}}], "encode": {"format": "webp"}, "path": "out/{stem}-a.webp"},
                  {"name": "b", "steps": [{"crop": {"width": 50, "height": 50}}, {"blur": {"sigma": 1}}], "encode": {"format": "png"}, "path": "out/{stem}-b.png"}
                ]}
                """.utf8), to: "p.json")

        let result = try CommandRunner.run(["run", "--log-level", "debug", directory.url.appendingPathComponent("p.json").path])

        #expect(result.status == 1, "one input is broken: \(result.standardError)")
        let line = result.standardError.split(separator: "\n").first { $0.contains("libvips images still alive") }
        #expect(line?.contains("count=0") == true, "\(line ?? "no line")")
    }
}
