import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// AVIF outputs through libavif: files libvips (libheif) reads back, with the subsampling,
/// lossless, metadata and quality heifsave gives the same settings, and clear failures.
@Suite struct AVIFOutputTests {
    /// Encodes `image` as an output would (prepared, then encoded) and returns the file's bytes.
    func encoded(_ image: VipsImage, _ settings: EncoderSettings) throws -> Data {
        let prepared = try ImageEncoder.prepare(image, for: settings)
        return try ImageEncoder.encodedBytes(prepared, with: settings).0
    }

    /// What libvips' heifsave writes for the same settings, as AVIF outputs were written before.
    func heifsave(_ image: VipsImage, _ settings: EncoderSettings) throws -> Data {
        try ImageEncoder.prepare(image, for: settings).image.encoded(suffix: settings.vipsSuffix)
    }

    /// The chroma subsampling the file's AV1 configuration box (av1C) declares, as "4:2:0" or
    /// "4:4:4": its third byte holds subsampling_x (0x08) and subsampling_y (0x04).
    func subsampling(_ file: Data) -> String? {
        let bytes = [UInt8](file)
        let marker = Array("av1C".utf8)
        guard bytes.count > 8, let at = (0..<(bytes.count - 8)).first(where: { Array(bytes[$0..<$0 + 4]) == marker }) else {
            return nil
        }
        let flags = bytes[at + 4 + 2]
        switch (flags & 0x08 != 0, flags & 0x04 != 0) {
        case (true, true): return "4:2:0"
        case (false, false): return "4:4:4"
        default: return "other"
        }
    }

    /// A photograph-like test image: a gradient with noise over it, and with a fourth band an
    /// alpha opaque on the left half only.
    func photo(width: Int, height: Int, bands: Int = 3) throws -> VipsImage {
        let widest = max(1, width - 1)
        let across: [UInt8] = (0..<width).map { (x: Int) -> UInt8 in UInt8(x * 255 / widest) }
        // The noise, (7919 x + 104729 y) mod 23, is row 0's shifted by (104729 y) mod 23: one row
        // for each of the 23 shifts. The closures' types are spelt out, which spares the type
        // checker a long search.
        let noise: [[UInt8]] = (0..<23).map { (shift: Int) -> [UInt8] in
            (0..<width).map { (x: Int) -> UInt8 in UInt8(128 + (x * 7919 + shift) % 23) }
        }
        let alpha: [UInt8] = (0..<width).map { (x: Int) -> UInt8 in x < width / 2 ? 255 : 0 }
        return try Fixtures.bandByBand(width: width, height: height, bands: bands) { band, y, row in
            switch band {
            case 0: row.update(from: across, count: width)
            case 1: memset(row, Int32((y * 255) / max(1, height - 1)), width)
            case 2: row.update(from: noise[(y * 104_729) % 23], count: width)
            default: row.update(from: alpha, count: width)
            }
        }
    }

    @Test func avifFromLibavifReadsBackInLibvipsAtItsSize() throws {
        let image = try photo(width: 96, height: 64)
        let file = try encoded(image, EncoderSettings(format: .avif, quality: 60))
        let decoded = try VipsImage.open(data: file, options: "fail_on=warning")
        #expect(decoded.loader?.hasPrefix("heifload") == true)
        #expect(decoded.size == ImageSize(width: 96, height: 64))
        #expect(decoded.bands == 3)
        // The file is libavif's, not heifsave's: heifsave names libheif's encoder nowhere, and
        // the bytes differ.
        #expect(file != (try heifsave(image, EncoderSettings(format: .avif, quality: 60))))
        // Close to the input: a lossy encode, not a broken one.
        #expect(Fixtures.isClose(try decoded.pixel(x: 48, y: 32), try image.pixel(x: 48, y: 32), tolerance: 16))
    }

    @Test func chromaIsSubsampledBelowQuality90AsHeifsaveDoes() throws {
        let image = try photo(width: 64, height: 64)
        for (quality, expected) in [(50, "4:2:0"), (89, "4:2:0"), (90, "4:4:4")] {
            let settings = EncoderSettings(format: .avif, quality: quality, effort: 7)
            #expect(subsampling(try encoded(image, settings)) == expected, "quality \(quality)")
            #expect(subsampling(try heifsave(image, settings)) == expected, "heifsave at quality \(quality)")
        }
        // Lossless is 4:4:4 at any quality. heifsave chose from the quality alone, so its
        // "lossless" below quality 90 halved the colour and was not lossless.
        let lossless = EncoderSettings(format: .avif, quality: 50, lossless: true, effort: 7)
        #expect(subsampling(try encoded(image, lossless)) == "4:4:4")
        #expect(subsampling(try heifsave(image, lossless)) == "4:2:0")
    }

    @Test func losslessKeepsEveryPixelWithAlpha() throws {
        let image = try photo(width: 33, height: 17, bands: 4)
        let file = try encoded(image, EncoderSettings(format: .avif, lossless: true, effort: 7))
        let decoded = try VipsImage.open(data: file).rendered()
        #expect(decoded.bands == 4)
        #expect(try decoded.bytes() == (try image.bytes()))
    }

    @Test func alphaIsKept() throws {
        let image = try photo(width: 64, height: 32, bands: 4)
        let decoded = try VipsImage.open(data: try encoded(image, EncoderSettings(format: .avif, quality: 70))).rendered()
        #expect(decoded.hasAlpha)
        #expect(try decoded.pixel(x: 8, y: 16)[3] > 240)
        #expect(try decoded.pixel(x: 56, y: 16)[3] < 15)
    }

    @Test(arguments: [(1, 1), (1, 7), (7, 1), (3, 5), (17, 9)])
    func tinyAndOddSizesEncode(width: Int, height: Int) throws {
        for bands in [3, 4] {
            let image = try photo(width: width, height: height, bands: bands)
            let decoded = try VipsImage.open(data: try encoded(image, EncoderSettings(format: .avif, quality: 50, effort: 9)))
            #expect(decoded.size == ImageSize(width: width, height: height))
            #expect(decoded.bands == bands)
        }
    }

    @Test func sixteenBitAndGreyscaleInputsAreWrittenAsEightBitSRGB() throws {
        let values = (0..<(32 * 16 * 3)).map { (index: Int) -> UInt16 in UInt16(truncatingIfNeeded: index * 997) }
        let deep = try VipsImage(pixels16: values, width: 32, height: 16, bands: 3).labelled(as: .rgb16)
        let decoded = try VipsImage.open(data: try encoded(deep, EncoderSettings(format: .avif, lossless: true))).rendered()
        #expect(decoded.bandFormat == .uchar)
        #expect(try decoded.bytes() == (try deep.inEightBits().bytes()))

        let grey = try Fixtures.image(width: 16, height: 16, bands: 1) { x, _ in [UInt8(x * 16)] }
        let greyFile = try VipsImage.open(data: try encoded(grey, EncoderSettings(format: .avif, lossless: true))).rendered()
        #expect(try greyFile.pixel(x: 5, y: 5).prefix(3).allSatisfy { $0 == 80 })
    }

    @Test func metadataIsWrittenAsHeifsaveWritesItAndStripped() throws {
        let image = try photo(width: 64, height: 48).convertedToProfile("srgb")
            .settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
        var settings = EncoderSettings(format: .avif, quality: 60)
        settings.keep = Set(EncoderSettings.Metadata.allCases)
        let kept = try VipsImage.open(data: try encoded(image, settings))
        let theirs = try VipsImage.open(data: try heifsave(image, settings))
        for field in ["icc-profile-data", "exif-data"] {
            #expect(kept.hasField(field) == theirs.hasField(field), "\(field)")
            #expect(kept.hasField(field), "\(field)")
        }
        #expect(kept.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
        #expect(kept.iccProfileBytes == theirs.iccProfileBytes)

        settings.keep = [.icc]
        let iccOnly = try VipsImage.open(data: try encoded(image, settings))
        #expect(iccOnly.hasField("icc-profile-data"))
        #expect(iccOnly.stringField("exif-ifd0-Make") == nil)

        settings.strip = true
        let stripped = try VipsImage.open(data: try encoded(image, settings))
        #expect(!stripped.hasField("icc-profile-data"))
        #expect(!stripped.hasField("exif-data"))
        #expect(!stripped.hasField("xmp-data"))

        // iccProfile converts and embeds even with nothing else kept.
        settings.iccProfile = "p3"
        let p3 = try VipsImage.open(data: try encoded(image, settings))
        #expect(p3.hasField("icc-profile-data"))
        #expect(p3.iccProfileBytes != kept.iccProfileBytes)
    }

    @Test func atTheSameQualityFilesAreNoLargerAndNoWorseThanHeifsaves() throws {
        // A photograph-sized image with detail and smooth areas; the default effort.
        let image = try Fixtures.noise(width: 256, height: 192).applying("gaussblur", ["sigma": .number(1.5)])
            .joiningBands(try Fixtures.gradient(width: 256, height: 192).extractingBands(0, count: 2)).extractingBands(0, count: 3)
        let metric = try SSIMULACRA2(original: image.rendered())
        for quality in [40, 60] {
            let settings = EncoderSettings(format: .avif, quality: quality, strip: true)
            let ours = try encoded(image, settings)
            let theirs = try heifsave(image, settings)
            let ourScore = try metric.score(try VipsImage.open(data: ours))
            let theirScore = try metric.score(try VipsImage.open(data: theirs))
            // Within what one AV1 encode differs from another of the same settings, no more.
            #expect(Double(ours.count) <= Double(theirs.count) * 1.03, "quality \(quality): \(ours.count) against \(theirs.count) bytes")
            #expect(ourScore >= theirScore - 1, "quality \(quality): \(ourScore) against \(theirScore)")
        }
    }

    @Test func theEncoderIsAskedForAomAtLibheifsSpeedAndQuantizer() {
        // The measured choice (Benchmarks/RESULTS.md, "AVIF through libavif"): aom at libheif's
        // speed and quantizer in libavif's all-intra defaults; aom's faster speeds, its option
        // switches on all images and the other codecs each made files larger or worse.
        let standard = AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 50, effort: 4), width: 960, height: 600)
        #expect(standard.codec == .aom)
        #expect(standard.speed == 5)
        #expect(standard.quantizer == 32)
        #expect(standard.codecOptions == nil)
        #expect(!standard.fullChroma && !standard.lossless)
        for effort in 0...9 {
            let encoding = AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 75, effort: effort), width: 640, height: 480)
            #expect(encoding.speed == 9 - effort, "effort \(effort)")
            #expect(encoding.quantizer == 16, "effort \(effort)")
            #expect(encoding.codecOptions == nil, "effort \(effort)")
        }
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 90)).fullChroma)
        #expect(AVIFOutput.quantizer(quality: 1) == 62)
        #expect(AVIFOutput.quantizer(quality: 100) == 0)
    }

    @Test func largeImagesAtTheDefaultEffortSkipPartitionsBelowEightByEight() throws {
        // Measured: on images 1920 wide, the same bytes and scores in less time; on smaller
        // images and at the other efforts it was not kept.
        let large = AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 50), width: 1920, height: 1200)
        #expect(large.speed == 5)
        #expect(large.codecOptions == "min-partition-size=8")
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 50), width: 1200, height: 1920).codecOptions != nil)
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 50), width: 1920, height: 1023).codecOptions == nil)
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 50, effort: 5), width: 1920, height: 1200).codecOptions == nil)
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, lossless: true), width: 1920, height: 1200).codecOptions == nil)
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 90), width: 1920, height: 1200).codecOptions == nil)
        #expect(AVIFOutput.encoding(EncoderSettings(format: .avif, quality: 75), width: 1920, height: 1200).codecOptions != nil)
        // aom takes the option, and the file reads back as the image.
        let image = try photo(width: AVIFOutput.largeSide, height: AVIFOutput.largeSide)
        let file = try encoded(image, EncoderSettings(format: .avif, quality: 50))
        let decoded = try VipsImage.open(data: file).rendered()
        #expect(decoded.size == ImageSize(width: AVIFOutput.largeSide, height: AVIFOutput.largeSide))
        #expect(Fixtures.isClose(try decoded.pixel(x: 700, y: 300), try image.pixel(x: 700, y: 300), tolerance: 16))
    }

    @Test func libavifsFailuresAreClearErrors() throws {
        let image = try photo(width: 16, height: 16)
        let wrong = AVIFEncoding(codec: .aom, speed: 9, quantizer: 30, codecOptions: "no-such-option=1")
        #expect {
            _ = try image.encodedAVIF(wrong)
        } throws: { error in
            let message = "\(error)"
            return message.contains("libavif (aom) could not encode") && message.contains("no-such-option")
        }
        let wide = try VipsImage(
            pixels: [UInt8](repeating: 9, count: (AVIFEncoding.mostSide + 1) * 3), width: AVIFEncoding.mostSide + 1, height: 1, bands: 3)
        #expect {
            _ = try wide.encodedAVIF(AVIFEncoding(codec: .aom, speed: 9, quantizer: 30))
        } throws: { error in
            "\(error)".contains("too large for AVIF")
        }
    }

    @Test func aTooWideImageFailsItsOutputNamingTheInputAndTheEncodeStage() async throws {
        let directory = try TemporaryDirectory()
        let wide = try VipsImage(
            pixels: [UInt8](repeating: 90, count: (AVIFEncoding.mostSide + 1) * 2 * 3), width: AVIFEncoding.mostSide + 1, height: 2,
            bands: 3)
        try directory.write(try wide.encoded(suffix: ".png"), to: "in/wide.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "a", "encode": {"format": "avif"}, "path": "out/{stem}.avif"}"#])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 1)
        let failure = "\(reports.flatMap(\.failures))"
        #expect(failure.contains("wide.png"), "\(failure)")
        #expect(failure.contains("encode"), "\(failure)")
        #expect(failure.contains("too large for AVIF"), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/wide.avif"))
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")) ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test(arguments: [(1100, 1040), (480, 320)])
    func theBytesAreTheSameOnOneThreadOrOnIdleCores(width: Int, height: Int) throws {
        // Given a photo coded in two tiles, and one too small for tiles, at aom's speed 8, where
        // its row threads would code a file of their own (at 9 and 10 they change nothing)
        let image = try photo(width: width, height: height)
        let encoding = AVIFEncoding(codec: .aom, speed: 8, quantizer: 30)
        // When it is encoded alone with four cores, with two, and with one, as beside busy lanes
        let spread = try image.encodedAVIF(encoding, cores: 4)
        let two = try image.encodedAVIF(encoding, cores: 2)
        let alone = try image.encodedAVIF(encoding, cores: 1)
        // Then the files are one file, and a good one
        #expect(spread == alone, "\(spread.count) bytes on four cores, \(alone.count) on one")
        #expect(two == alone, "\(two.count) bytes on two cores, \(alone.count) on one")
        let decoded = try VipsImage.open(data: spread).rendered()
        #expect(decoded.size == ImageSize(width: width, height: height))
        #expect(Fixtures.isClose(try decoded.pixel(x: 300, y: 200), try image.pixel(x: 300, y: 200), tolerance: 16))
    }

    @Test func anOutputMadeBesideOthersIsTheOutputMadeAlone() async throws {
        // Given one photo listed alone, and then beside seven others that keep every lane busy
        let photo = try self.photo(width: 1100, height: 1040).encoded(suffix: ".png")
        let outputs = [#"{"name": "a", "encode": {"format": "avif", "quality": 50, "effort": 1}, "path": "out/{stem}.avif"}"#]
        let alone = try TemporaryDirectory()
        try alone.write(photo, to: "in/photo.png")
        _ = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: alone)
        let crowded = try TemporaryDirectory()
        try crowded.write(photo, to: "in/photo.png")
        for index in 0..<7 {
            try crowded.write(try self.photo(width: 600 - index * 8, height: 560).encoded(suffix: ".png"), to: "in/other-\(index).png")
        }
        _ = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: crowded)
        // When both are read, then they are the same bytes
        let aloneBytes = try Data(contentsOf: URL(fileURLWithPath: alone.path + "/out/photo.avif"))
        let crowdedBytes = try Data(contentsOf: URL(fileURLWithPath: crowded.path + "/out/photo.avif"))
        #expect(aloneBytes == crowdedBytes, "\(aloneBytes.count) bytes alone, \(crowdedBytes.count) beside others")
    }
}
