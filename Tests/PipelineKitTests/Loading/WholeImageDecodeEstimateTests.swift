import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Loaders that never stream hold the whole image whatever the shrink after them, so an input's
/// memory estimate counts it at full size: a tiny GIF can declare a canvas of gigabytes, and a
/// phone's HEIC or a JPEG XL is decoded whole before libvips has a row.
@Suite struct WholeImageDecodeEstimateTests {
    static let settings = DecompressSettings(concurrency: 1, maxPixels: 200_000_000, autorotate: true, failOn: .truncated)

    /// One 200 px wide output, as the trial's pipeline had.
    static func outputs() throws -> [OutputDefinition] {
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [#"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#])
        return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
    }

    /// A GIF of a few bytes that declares one frame of `width` × `height`.
    static func gifBomb(width: UInt16, height: UInt16) -> Data {
        var bytes = Data("GIF89a".utf8)
        let size = [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
        bytes += size + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        bytes += [0x2C, 0, 0, 0, 0] + size + [0]
        bytes += [0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]
        return bytes
    }

    func estimated(_ data: Data, named name: String) throws -> Int64 {
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: name)
        let decoder = ImageDecoder(settings: Self.settings, outputs: try Self.outputs())
        return try #require(decoder.memoryNeeds(of: .file(path: path, byteCount: Int64(data.count)))).estimate
    }

    @Test func aStillGIFsFrameBufferIsCountedAtTheCanvasSize() throws {
        let estimate = try estimated(Self.gifBomb(width: 12000, height: 12000), named: "bomb.gif")
        #expect(estimate >= 12000 * 12000 * 4, "\(estimate)")
    }

    @Test(arguments: [".heic[compression=av1,Q=50]", ".jxl[Q=50]"])
    func aHEIFOrJPEGXLIsCountedDecodedWhole(suffix: String) throws {
        let photo = try Fixtures.gradient(width: 1600, height: 1200).encoded(suffix: suffix)
        let estimate = try estimated(photo, named: "photo" + suffix.prefix { $0 != "[" })
        #expect(estimate >= 1600 * 1200 * DecodeMemoryEstimate.wholeImageBytesPerPixel, "\(estimate)")
        // A JPEG of the same size streams, shrunk as it loads: far less
        let jpeg = try estimated(try Fixtures.jpeg(try Fixtures.gradient(width: 1600, height: 1200)), named: "photo.jpg")
        #expect(jpeg < 1600 * 1200 * 4, "\(jpeg)")
    }

    @Test func explainGivesTheEstimateAdmissionWeighs() throws {
        // Given the GIF of a few bytes that declares a 12000×12000 canvas, beside a photo
        let directory = try TemporaryDirectory()
        try directory.write(Self.gifBomb(width: 12000, height: 12000), to: "in/bomb.gif")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [#"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#])
        // When the plan is explained
        let explanation = try PipelineHarness.pipeline(json, in: directory).explain()
        // Then its largest input is the GIF, at its frame buffer, as the run's admission weighs it
        let definition = try PipelineDefinition(json: json, baseDirectory: directory.url, processors: .standard)
        let path = directory.path + "/in/bomb.gif"
        let needs = try #require(
            ImageDecoder(settings: definition.decompress, outputs: definition.outputs).memoryNeeds(
                of: .file(path: path, byteCount: Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count))))
        #expect(explanation.largestInputEstimate == needs.estimate && needs.estimate >= 12000 * 12000 * 4)
        #expect(explanation.text.contains("its loader decodes the whole image"), "\(explanation.text)")
    }
}

/// A step that holds a larger image than it makes counts it: a smart crop looks at the whole
/// image scaled to cover its box, which for a sliver is far larger than the input.
extension WholeImageDecodeEstimateTests {
    @Test func aSmartCoverOfASliverCountsTheScaledImageItLooksAt() throws {
        func outputs(_ position: String) throws -> [OutputDefinition] {
            let output =
                #"{"name": "t", "steps": [{"resize": {"width": 200, "height": 200, "position": "\#(position)"}}], "#
                + #""encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
            let json = PipelineHarness.json(inputs: ["in/*"], outputs: [output])
            return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
        }
        // A 3×20000 sliver covers 200×200 at 200×1333333
        let sliver = ImageSize(width: 3, height: 20000)
        let scaled = Int64(200 * 1_333_333) * 4
        var smart = ["attention", "entropy"]
        #if Faces
        smart.append("faces")
        #endif
        for position in smart {
            let bytes = DecodeMemoryEstimate.imageBytes(decodeSize: sliver, outputs: try outputs(position))
            #expect(bytes == Int64(3 * 20000) * 4 + scaled, "\(position): \(bytes)")
        }
        // A fixed position computes only its window
        for position in ["centre", "north", "south"] {
            #expect(DecodeMemoryEstimate.imageBytes(decodeSize: sliver, outputs: try outputs(position)) == Int64(3 * 20000 + 200 * 200) * 4)
        }
    }

    /// An art-directed crop is the output's resize at another box: at a smart position it
    /// looks at the image scaled to cover that box too.
    @Test func anArtDirectedSmartCropCountsTheScaledImageItLooksAt() throws {
        func bytes(_ position: String) throws -> Int64 {
            let output =
                #"{"name": "hero", "widths": [100], "formats": ["webp"], "#
                + #""art": [{"media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [200]}], "#
                + #""steps": [{"resize": {"position": "\#(position)"}}], "path": "out/{stem}{art}-{width}.{format}"}"#
            let json = PipelineHarness.json(inputs: ["in/*"], outputs: [output])
            let outputs = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
            return DecodeMemoryEstimate.imageBytes(decodeSize: ImageSize(width: 2000, height: 1000), outputs: outputs)
        }
        // The 200×200 crop of a 2000×1000 image looks at 400×200 when it chooses its window
        #expect(try bytes("attention") - bytes("centre") == Int64(400 * 200 - 200 * 200) * 4)
    }
}
