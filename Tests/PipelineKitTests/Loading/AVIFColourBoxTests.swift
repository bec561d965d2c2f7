import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An AVIF whose colour box (CICP `nclx`) alone says its colours are Display P3 is converted
/// from P3, still or animated, as one with a P3 profile is: libvips' HEIF loader passes the box over.
@Suite struct AVIFColourBoxTests {
    /// Display P3's values of sRGB's pure red.
    static let p3Red: [UInt8] = [234, 51, 34]

    /// `avif` with the primaries of every colour box set to `primaries` (H.273's numbers).
    func withPrimaries(_ primaries: UInt8, _ avif: Data) throws -> Data {
        var bytes = [UInt8](avif)
        var found = 0
        for index in 0..<(bytes.count - 6) where bytes[index..<(index + 4)].elementsEqual("nclx".utf8) {
            (bytes[index + 4], bytes[index + 5]) = (0, primaries)
            found += 1
        }
        #expect(found > 0, "test setup: the AVIF has no colour box")
        return Data(bytes)
    }

    /// The run's PNG of `avif`: its middle pixel.
    func decodedMiddle(of avif: Data) async throws -> [UInt8] {
        let directory = try TemporaryDirectory()
        try directory.write(avif, to: "in/red.avif")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        return try VipsImage.open(file: directory.path + "/out/red.png").rendered().pixel(x: 8, y: 8).map { UInt8($0) }
    }

    @Test(arguments: [false, true]) func aDisplayP3ColourBoxIsConvertedAsItsProfileWouldBe(animated: Bool) async throws {
        // Given P3's red coded losslessly with no profile, in a still and in a two-frame sequence
        let frames = animated ? 2 : 1
        let image = try VipsImage(
            pixels: Array(repeating: Self.p3Red, count: 16 * 16 * frames).flatMap { $0 }, width: 16, height: 16 * frames, bands: 3)
        let encoding = AVIFEncoding(codec: .aom, speed: 9, quantizer: 0, lossless: true, keepsMetadata: false)
        let srgb =
            animated
            ? try image.encodedAVIFSequence(encoding, frameHeight: 16, delays: [100, 100], loop: 0) : try image.encodedAVIF(encoding)
        #expect(AVIFColourDescription.read(bytes: VipsBytes(srgb))?.primaries == 1)

        // When its colour box says sRGB (primaries 1), then the values are sRGB's
        #expect(try await decodedMiddle(of: srgb) == Self.p3Red)

        // When it says Display P3 (primaries 12), then they are converted to sRGB's red
        let p3 = try withPrimaries(12, srgb)
        let description = AVIFColourDescription.read(bytes: VipsBytes(p3))
        #expect(description?.primaries == 12 && description?.transfer == 13 && description?.hasICCProfile == false)
        let red = try await decodedMiddle(of: p3)
        #expect(red[0] >= 250 && red[1] <= 8 && red[2] <= 8, "\(red)")

        // And primaries there is no profile for (BT.2020) are read as sRGB, as before
        #expect(try await decodedMiddle(of: try withPrimaries(9, srgb)) == Self.p3Red)
    }
}
