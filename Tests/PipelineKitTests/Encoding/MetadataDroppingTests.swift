import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Metadata an encoder cannot write is dropped with a warning naming the input and the field;
/// the output is written all the same.
@Suite struct MetadataDroppingTests {
    /// A WebP (whose EXIF chunk may be of any length) whose EXIF block is over 64 KB: a
    /// description of 70,000 characters.
    static func webpWithLongEXIF() throws -> Data {
        let description = String(repeating: "a", count: 70_000)
        return try Fixtures.gradient(width: 32, height: 24).settingStringField("exif-ifd0-ImageDescription", to: description)
            .encoded(suffix: ".webp[lossless]")
    }

    /// Runs `input`, named `name` in `in/`, to one output per format of `suffixes` (`jpg`,
    /// `webp`…), each keeping `keep` (JSON) and named by its suffix.
    func run(_ input: Data, named name: String, keep: String, suffixes: [String]) async throws -> (
        reports: [ItemReport], summary: RunSummary, directory: TemporaryDirectory
    ) {
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/" + name)
        let outputs = suffixes.map { suffix in
            let format = suffix == "jpg" ? "jpeg" : suffix
            return #"{"name": "\#(format)", "encode": {"format": "\#(format)", "keep": \#(keep)}, "path": "out/{stem}.\#(suffix)"}"#
        }
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: directory)
        return (reports, summary, directory)
    }

    @Test func exifTooLongForJPEGIsDroppedWithAWarningAndWebPIsWrittenWithout() async throws {
        // Given a WebP whose EXIF is longer than a JPEG marker holds
        let input = try Self.webpWithLongEXIF()
        #expect((try VipsImage.open(data: input).blobLength("exif-data") ?? 0) > 65533)
        // When it runs
        let (reports, summary, directory) = try await run(input, named: "long-exif.webp", keep: #""all""#, suffixes: ["jpg", "webp"])
        // Then both outputs are written; the JPEG's report warns that its EXIF was dropped
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let written = try #require(reports.first?.written)
        let jpegWarnings = written.first { $0.output == "jpeg" }?.warnings ?? []
        #expect(jpegWarnings.count == 1, "\(jpegWarnings)")
        #expect(jpegWarnings.first?.contains("in/long-exif.webp") == true, "\(jpegWarnings)")
        #expect(jpegWarnings.first?.contains("exif-data") == true, "\(jpegWarnings)")
        #expect(written.first { $0.output == "webp" }?.warnings.isEmpty == true)
        // libvips writes a fresh EXIF block of its own (resolution, size) in place of the long one.
        let jpeg = try VipsImage.open(file: directory.path + "/out/long-exif.jpg")
        #expect((jpeg.blobLength("exif-data") ?? 0) < 1000)
        #expect(jpeg.size == ImageSize(width: 32, height: 24))
        #expect(try VipsImage.open(file: directory.path + "/out/long-exif.webp").size == ImageSize(width: 32, height: 24))
    }

    /// libvips reads a kept EXIF block back to update it before it saves a PNG, WebP or AVIF,
    /// and fails the save past 1 MB (HEIC's puts a block of its own in its place): such a block
    /// is dropped with a warning, as for a JPEG.
    @Test func exifOverAMegabyteIsDroppedForPNGWebPAVIFAndHEICWithAWarning() async throws {
        // Given a WebP whose EXIF block is 2 MB long
        let description = String(repeating: "a", count: 2_000_000)
        let input = try Fixtures.gradient(width: 32, height: 24).settingStringField("exif-ifd0-ImageDescription", to: description)
            .encoded(suffix: ".webp[lossless]")
        #expect((try VipsImage.open(data: input).blobLength("exif-data") ?? 0) > 1 << 20)
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/huge-exif.webp")
        let outputs = ["png", "webp", "avif", "heic"].map {
            #"{"name": "\#($0)", "encode": {"format": "\#($0)", "keep": ["exif"]}, "path": "out/{stem}.\#($0)"}"#
        }
        // When it is kept into each format
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: directory)
        // Then every output is written, and each says the block was dropped
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let written = try #require(reports.first?.written)
        #expect(written.count == 4)
        for output in written {
            #expect(
                output.warnings == [
                    "in/huge-exif.webp → \(output.output): dropped the metadata field exif-data (longer than the 1 MB of EXIF libvips writes), which \(output.output) cannot write"
                ], "\(output.warnings)")
        }
    }

    @Test func xmpOverWhatLibvipsWritesInAJPEGIsDroppedWithAWarning() async throws {
        // Given PNGs whose XMP is just under and just over the 60,000 bytes libvips writes in a
        // JPEG (though a marker holds more)
        let directory = try TemporaryDirectory()
        for length in [59_990, 60_010] {
            let packet = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><!--"# + String(repeating: "a", count: length - 55) + "--></x:xmpmeta>"
            let image = try Fixtures.gradient(width: 32, height: 24).settingBlobField("xmp-data", to: Array(packet.utf8))
            #expect(image.blobLength("xmp-data") == length)
            try directory.write(try image.encoded(suffix: ".png"), to: "in/xmp-\(length).png")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "jpeg", "encode": {"format": "jpeg", "keep": ["xmp"]}, "path": "out/{stem}.jpg"}"#])
        // When they are kept into JPEGs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 2, "\(reports.flatMap(\.failures))")
        // Then the short one is kept without a word, and the long one dropped with a warning
        let warnings = Dictionary(uniqueKeysWithValues: reports.map { ($0.input.displayName, $0.written.flatMap(\.warnings)) })
        #expect(warnings["in/xmp-59990.png"] == [])
        #expect(try VipsImage.open(file: directory.path + "/out/xmp-59990.jpg").blobLength("xmp-data") == 59_990)
        let dropped = try #require(warnings["in/xmp-60010.png"])
        #expect(dropped.count == 1 && dropped[0].contains("xmp-data") && dropped[0].contains("60,000 bytes"), "\(dropped)")
        #expect(try VipsImage.open(file: directory.path + "/out/xmp-60010.jpg").blobLength("xmp-data") == nil)
    }

    @Test func shortEXIFStaysInTheJPEGWithoutAWarning() async throws {
        let input = try Fixtures.gradient(width: 32, height: 24).settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
            .encoded(suffix: ".webp[lossless]")
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/short.webp")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "jpeg", "encode": {"format": "jpeg", "keep": "all"}, "path": "out/{stem}.jpg"}"#])
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        #expect(reports.first?.written.first?.warnings.isEmpty == true)
        let jpeg = try VipsImage.open(file: directory.path + "/out/short.jpg")
        #expect(jpeg.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
    }

    @Test func exifKeptForAFormatWhoseSaverCannotWriteItIsDroppedWithAWarning() async throws {
        // Given a photo whose EXIF names its camera, kept whole in four formats
        let input = try Fixtures.gradient(width: 32, height: 24).settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
            .encoded(suffix: ".jpg[Q=90]")
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/camera.jpg")
        let outputs = [("jxl", "jxl"), ("tiff", "tif"), ("gif", "gif"), ("png", "png")].map { format, fileExtension in
            #"{"name": "\#(format)", "encode": {"format": "\#(format)", "keep": "all"}, "path": "out/{stem}.\#(fileExtension)"}"#
        }
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: directory)
        // Then every output is written; those whose saver writes no EXIF say they dropped it, once
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let written = try #require(reports.first?.written)
        for format in ["jxl", "tiff", "gif"] {
            let warnings = written.first { $0.output == format }?.warnings ?? []
            #expect(
                warnings == ["in/camera.jpg → \(format): dropped the metadata field exif-data, which \(format) cannot write"], "\(warnings)"
            )
        }
        #expect(written.first { $0.output == "png" }?.warnings.isEmpty == true)
        let png = try VipsImage.open(file: directory.path + "/out/camera.png")
        #expect(png.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
    }

    @Test func aUTF16XMPPacketIsKeptWholeInAJPEGAndDroppedFromAPNGWithAWarning() async throws {
        // Given a JPEG whose XMP packet is UTF-16, as the XMP specification allows
        let text = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><dc:creator>Ann Author</dc:creator></x:xmpmeta>"#
        let packet: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let input = try Fixtures.gradient(width: 32, height: 24).settingBlobField("xmp-data", to: packet).encoded(suffix: ".jpg")

        // When it runs
        let (reports, summary, directory) = try await run(input, named: "utf16.jpg", keep: #"["xmp"]"#, suffixes: ["jpg", "png"])

        // Then the JPEG keeps the packet whole, and the PNG, whose saver would cut it at its
        // first NUL byte, is written without it, saying so
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        #expect(try VipsImage.open(file: directory.path + "/out/utf16.jpg").blobCopy("xmp-data") == packet)
        #expect(try VipsImage.open(file: directory.path + "/out/utf16.png").blobCopy("xmp-data") == nil)
        let warnings = reports.first?.written.first { $0.output == "png" }?.warnings ?? []
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("in/utf16.jpg → png: dropped the metadata field xmp-data (with NUL bytes") == true, "\(warnings)")
    }
}
