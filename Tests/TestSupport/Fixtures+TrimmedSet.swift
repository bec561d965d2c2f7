import Foundation

/// A set of widths after a `trim`, whose trimmed image the plan cannot size: the runner, the
/// S3 store and the server tests each make it.
extension Fixtures {
    /// A 400×300 white PNG with an 80×60 red box: trimmed, 80×60.
    package static func boxedPNG() throws -> Data {
        let image = try Fixtures.image(width: 400, height: 300, bands: 3) { x, y in
            (150..<230).contains(x) && (100..<160).contains(y) ? [200, 30, 30] : [255, 255, 255]
        }
        return try Fixtures.png(image)
    }

    /// A pipeline over `in/*.png` with output `t`, widths 60, 100 and 640 of the trimmed image
    /// at `path` (both wider widths stand in for its own 80 px), and output `e`, of `"original"`.
    package static func trimmedSetJSON(path: String) -> String {
        PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "t", "widths": [60, 100, 640], "encode": {"format": "png"}, "steps": [{"trim": {}}, {"resize": {}}], "path": "\#(path)"}"#,
                #"{"name": "e", "widths": ["original"], "encode": {"format": "jpeg"}, "path": "out/e/{stem}-{width}.jpg"}"#,
            ])
    }

    /// A pipeline over `in/*.png` with one output, `t`: the trimmed image (80 px, 400 before
    /// the trim) at `widths` (JSON), enlarged past its own width when `enlarges`, as PNG files
    /// at `path`.
    package static func trimmedSetJSON(widths: String, enlarges: Bool, path: String) -> String {
        let resize = enlarges ? #"{"resize": {"withoutEnlargement": false}}"# : #"{"resize": {}}"#
        return PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "t", "widths": \#(widths), "encode": {"format": "png"}, "steps": [{"trim": {}}, \#(resize)], "path": "\#(path)"}"#
            ])
    }
}
