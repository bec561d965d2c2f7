import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Mutation fuzzing of decoding: images made by libvips are bit-flipped, cut, spliced and given
/// wild header values, then sent through decompress → resize → encode as the runner does. Each
/// must come out as an image or as an `ItemError` naming the decompress stage; nothing may crash
/// (CI runs this under AddressSanitizer too). Seeded with a fixed count, so failures replay.
@Suite struct DecodeFuzzTests {
    /// Small valid images in every format and flavour the loaders have code paths for.
    static func seeds() throws -> [(name: String, data: Data)] {
        let photo = try Fixtures.gradient(width: 40, height: 30)
        let alpha = try Fixtures.gradient(width: 24, height: 20, bands: 4)
        let grey = try Fixtures.gradient(width: 24, height: 20, bands: 1)
        let frames = try HostileFixtures.frames(3, width: 16, height: 12) { [UInt8($0 * 80), 40, 200] }
        let ramp = (0..<(16 * 12 * 3)).map { (index: Int) -> UInt16 in UInt16(truncatingIfNeeded: index * 97) }
        let sixteen = try VipsImage(pixels16: ramp, width: 16, height: 12, bands: 3).labelled(as: .rgb16)
        return [
            ("baseline.jpg", try photo.encoded(suffix: ".jpg[Q=80]")),
            ("progressive.jpg", try photo.encoded(suffix: ".jpg[Q=70,interlace]")),
            ("exif-p3.jpg", try photo.withOrientation(6).convertedFromSRGB(toProfile: "p3").encoded(suffix: ".jpg[Q=75]")),
            ("cmyk.jpg", try grey.converted(to: .cmyk).encoded(suffix: ".jpg[Q=75,strip]")),
            ("rgb.png", try photo.encoded(suffix: ".png")),
            ("alpha.png", try alpha.encoded(suffix: ".png[compression=1]")),
            ("palette.png", try alpha.encoded(suffix: ".png[palette,bitdepth=4]")),
            ("sixteen.png", try sixteen.encoded(suffix: ".png[bitdepth=16]")),
            ("exif.png", try HostileFixtures.png(grey, orientation: 5)),
            ("lossy.webp", try alpha.withOrientation(3).encoded(suffix: ".webp[Q=60]")),
            ("lossless.webp", try photo.encoded(suffix: ".webp[lossless]")),
            ("animated.webp", try frames.encoded(suffix: ".webp[Q=50]")),
            ("still.gif", try photo.encoded(suffix: ".gif")),
            ("animated.gif", try frames.encoded(suffix: ".gif")),
            ("plain.tif", try photo.encoded(suffix: ".tif")),
            ("deflate-pages.tif", try frames.encoded(suffix: ".tif[compression=deflate]")),
            ("tiled-jpeg.tif", try photo.encoded(suffix: ".tif[tile,tile-width=16,tile-height=16,compression=jpeg]")),
            ("still.avif", try photo.encoded(suffix: ".avif[Q=40,effort=0]")),
            ("still.heic", try photo.encoded(suffix: ".heic[Q=40,compression=hevc,effort=0]")),
            ("still.jxl", try photo.encoded(suffix: ".jxl[Q=60,effort=3]")),
            ("still.jp2", try photo.encoded(suffix: ".jp2[Q=60]")),
        ]
    }

    /// One mutation of `input`: bit flips, interesting bytes, wild 16/32-bit header values, cuts,
    /// duplicated ranges and splices with another seed.
    static func mutate(_ input: [UInt8], seeds: [[UInt8]], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        guard !bytes.isEmpty else { return seeds.randomElement(using: &generator) ?? [] }
        // Headers hold the sizes and counts: aim half of the damage at the first 64 bytes.
        let limit = Bool.random(using: &generator) ? min(bytes.count, 64) : bytes.count
        let position = Int.random(in: 0..<limit, using: &generator)
        switch Int.random(in: 0..<7, using: &generator) {
        case 0:
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
            }
        case 1:
            bytes[position] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE].randomElement(using: &generator) ?? 0
        case 2:
            let value =
                [0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 16383, 16384, 65535, 100_000]
                .randomElement(using: &generator) ?? 0
            let width = Bool.random(using: &generator) ? 2 : 4
            let bigEndian = Bool.random(using: &generator)
            for index in 0..<width where position + index < bytes.count {
                let shift = bigEndian ? (width - 1 - index) * 8 : index * 8
                bytes[position + index] = UInt8(truncatingIfNeeded: value >> shift)
            }
        case 3:
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
        case 4:
            let end = min(bytes.count, position + Int.random(in: 1...256, using: &generator))
            bytes.insert(contentsOf: bytes[position..<end], at: Int.random(in: 0...bytes.count, using: &generator))
        case 5:
            let end = min(bytes.count, position + Int.random(in: 1...256, using: &generator))
            bytes.removeSubrange(position..<end)
        default:
            let other = seeds.randomElement(using: &generator) ?? []
            let cut = other.isEmpty ? 0 : Int.random(in: 0..<other.count, using: &generator)
            bytes = Array(bytes[..<max(position, min(bytes.count, 8))]) + Array(other[cut...])
        }
        return bytes
    }

    /// The runner's path for one input: decode, run the output's steps, render, encode.
    static func process(
        _ bytes: [UInt8], output: OutputDefinition, settings: DecompressSettings,
        asFile path: String?, into descriptor: Int32
    ) throws(ItemError) {
        let source: EncodedSource
        if let path {
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            source = .file(path: path, byteCount: Int64(bytes.count))
        } else {
            source = .memory(VipsBytes(Data(bytes)))
        }
        let decoded = try ImageDecoder(settings: settings, outputs: [output]).decode(source)
        do {
            var image = decoded.image
            let context = ProcessingContext(input: "fuzz", output: output.name, originalSize: decoded.originalSize)
            for step in output.steps { image = try step.process(image, context: context) }
            try ImageEncoder.encode(try image.rendered(), with: output.encoder, into: descriptor)
        } catch {
            // Resize and encode failures are the runner's to report; here only crashes matter.
        }
    }

    @Test(arguments: 0..<4)
    func mutatedImagesDecodeOrFailWithAnItemError(shard: Int) throws {
        // Given the seeds, an output as a pipeline file would have it, and bounds that keep one
        // wild header from taking the machine's memory or time
        let seeds = try Self.seeds()
        let seedBytes = seeds.map { [UInt8]($0.data) }
        let formats: [EncoderSettings.Format] = [.webp, .jpeg, .png, .webp]
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 24, "height": 24, "fit": "cover"}}], "encode": {"format": "\#(formats[shard].rawValue)"}, "path": "out/{stem}.x"}"#
            ], extra: #""decompress": {"maxPixels": 4000000, "timeout": "5s", "failOn": "\#(shard % 2 == 0 ? "none" : "truncated")"}"#)
        let definition = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        let directory = try TemporaryDirectory()
        let sink = open("/dev/null", O_WRONLY)
        defer { close(sink) }
        var generator = SeededGenerator(seed: 0xF022_0000 + UInt64(shard))
        var decoded = 0
        // When 500 mutants (or PIPELINE_FUZZ_ITERATIONS) go through decompress → resize → encode
        for index in 0..<PipelineFileFuzzTests.iterations(default: 500) {
            var bytes = seedBytes.randomElement(using: &generator) ?? []
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes = Self.mutate(bytes, seeds: seedBytes, using: &generator)
            }
            let path = index % 2 == 0 ? directory.path + "/mutant-\(index)" : nil
            // Then each is an image or an ItemError of the decompress stage with a reason
            do {
                try Self.process(bytes, output: definition.outputs[0], settings: definition.decompress, asFile: path, into: sink)
                decoded += 1
            } catch {
                #expect(error.stage == .decompress || error.stage == .fetch)
                #expect(!error.reason.isEmpty)
            }
            if let path { unlink(path) }
        }
        // And the mutations were not all fatal: some still decode
        #expect(decoded > 0)
    }

    @Test func theSeedsThemselvesGoThroughEveryStage() throws {
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 24, "height": 24, "fit": "cover"}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
            ])
        let definition = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        let sink = open("/dev/null", O_WRONLY)
        defer { close(sink) }
        for seed in try Self.seeds() {
            #expect(throws: Never.self, "\(seed.name)") {
                try Self.process(
                    [UInt8](seed.data), output: definition.outputs[0], settings: definition.decompress, asFile: nil, into: sink)
            }
        }
    }
}
