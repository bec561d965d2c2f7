import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Admission by memory counts what an input's most demanding encoder holds while it writes:
/// with an encode lane per core, several AV1 encoders (tens to hundreds of MB each) run at once.
@Suite struct EncoderMemoryTests {
    static let settings = DecompressSettings(concurrency: 1, maxPixels: 100_000_000, autorotate: true, failOn: .truncated)

    func outputs(_ encoders: [String]) throws -> [OutputDefinition] {
        let entries = encoders.enumerated().map { index, encode in
            #"{"name": "o\#(index)", "steps": [{"resize": {"width": 1000}}], "encode": \#(encode), "path": "out/{stem}-\#(index).{format}"}"#
        }
        let json = #"{"version": 1, "inputs": ["a.jpg"], "outputs": [\#(entries.joined(separator: ", "))]}"#
        return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
    }

    func estimate(_ encoders: [String], source: EncodedSource, lanes: Int = 1) throws -> Int64 {
        var decoder = ImageDecoder(settings: Self.settings, outputs: try outputs(encoders))
        decoder.encodeLanes = lanes
        return try #require(decoder.memoryNeeds(of: source)).estimate
    }

    @Test func theMostDemandingEncoderOfAnInputIsCountedOnce() throws {
        let directory = try TemporaryDirectory()
        let data = try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1000))
        let path = try directory.write(data, to: "a.jpg")
        let source = EncodedSource.file(path: path, byteCount: Int64(data.count))
        let outputPixels: Int64 = 1000 * 500
        let outputBytes = outputPixels * 4

        let jpeg = try estimate([#"{"format": "jpeg"}"#], source: source)
        // Baseline JPEG writes row by row; a second such output adds its image only.
        #expect(try estimate([#"{"format": "jpeg"}"#, #"{"format": "jpeg", "quality": 60}"#], source: source) == jpeg + outputBytes)
        // AV1 holds tens of MB and, for some images, nearly a hundred bytes a pixel.
        let avif = try estimate([#"{"format": "jpeg"}"#, #"{"format": "avif"}"#], source: source)
        #expect(avif == jpeg + outputBytes + 52_000_000 + 94 * outputPixels)
        // A lossless WebP beside it holds less, and encodes are not summed: one lane writes one at a time.
        let both = try estimate([#"{"format": "jpeg"}"#, #"{"format": "avif"}"#, #"{"format": "webp", "lossless": true}"#], source: source)
        #expect(both == avif + outputBytes)
        // A palette PNG's quantiser works from a histogram: mostly a fixed amount.
        #expect(try estimate([#"{"format": "png", "palette": true}"#], source: source) == jpeg + 42_000_000 + 6 * outputPixels)
        // Lossy WebP holds about 11 bytes a pixel, unless the image has alpha: libwebp then
        // compresses the alpha plane losslessly, which holds as much as a lossless encode.
        #expect(try estimate([#"{"format": "webp"}"#], source: source) == jpeg + 11 * outputPixels)
        let png = try Fixtures.png(try Fixtures.gradient(width: 2000, height: 1000, bands: 4))
        let alphaSource = EncodedSource.file(path: try directory.write(png, to: "alpha.png"), byteCount: Int64(png.count))
        #expect(
            try estimate([#"{"format": "webp"}"#], source: alphaSource)
                == estimate([#"{"format": "jpeg"}"#], source: alphaSource) + 8_000_000 + 36 * outputPixels)
        // Progressive JPEG keeps its coefficients.
        #expect(try estimate([#"{"format": "jpeg", "progressive": true}"#], source: source) == jpeg + 3 * outputPixels)
    }

    /// An input's outputs are encoded side by side, one on each encode lane: two quality
    /// searches at once each hold the original's planes and a trial.
    @Test func asManyEncodersAsThereAreEncodeLanesAreCountedTheMostDemandingFirst() throws {
        let directory = try TemporaryDirectory()
        let data = try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1000))
        let source = EncodedSource.file(path: try directory.write(data, to: "a.jpg"), byteCount: Int64(data.count))
        let outputPixels: Int64 = 1000 * 500
        let avif = 52_000_000 + 94 * outputPixels
        let lossless = 8_000_000 + 36 * outputPixels
        let encoders = [#"{"format": "jpeg"}"#, #"{"format": "avif"}"#, #"{"format": "webp", "lossless": true}"#]
        let one = try estimate(encoders, source: source)
        // Two lanes: the AV1 and the lossless WebP encoders at once; three or more, the same with
        // baseline JPEG's nothing
        #expect(try estimate(encoders, source: source, lanes: 2) == one + lossless)
        #expect(try estimate(encoders, source: source, lanes: 4) == one + lossless)
        #expect(one == (try estimate([#"{"format": "jpeg"}"#], source: source)) + 2 * outputPixels * 4 + avif)
        // Two searched outputs on two lanes hold both searches, where one lane holds the larger
        let searched = [#"{"format": "jpeg", "quality": {"ssimulacra2": 80}}"#, #"{"format": "webp", "quality": {"ssimulacra2": 80}}"#]
        let plain = try estimate([#"{"format": "jpeg"}"#], source: source)
        let searches = try searched.map { try estimate([$0], source: source) - plain }
        #expect(searches.allSatisfy { $0 > 0 }, "\(searches)")
        #expect(try estimate(searched, source: source, lanes: 2) - estimate(searched, source: source) == searches.min())
    }
}
