import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Encoders: each format and its options, as the written file shows them.
@Suite struct EncoderTests {
    /// Encodes through the real writer into a file and opens the result.
    func encode(_ image: VipsImage, _ settings: EncoderSettings) throws -> (image: VipsImage, bytes: Int, data: Data) {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/out." + settings.format.fileExtension
        let bytes = try ImageWriter.write(to: path, root: directory.path) { descriptor throws(ItemError) in
            do {
                try ImageEncoder.encode(image, with: settings, into: descriptor)
            } catch {
                throw ItemError(.encoding, stage: .encode, reason: "\(error)", underlying: error)
            }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.count == bytes)
        return (try VipsImage.open(data: data, options: "fail_on=warning").rendered(), bytes, data)
    }

    @Test func jpegQualityProgressiveAndSubsamplingAreApplied() throws {
        let photo = try Fixtures.gradient(width: 256, height: 256)
        let low = try encode(photo, EncoderSettings(format: .jpeg, quality: 30))
        let high = try encode(photo, EncoderSettings(format: .jpeg, quality: 95))
        #expect(low.bytes < high.bytes)
        #expect(low.image.loader?.hasPrefix("jpegload") == true)
        #expect(low.image.intField("interlaced") == nil || low.image.intField("interlaced") == 0)

        let progressive = try encode(photo, EncoderSettings(format: .jpeg, progressive: true, chromaSubsampling: .subsample444))
        #expect(progressive.image.intField("interlaced") == 1)
        #expect(progressive.image.stringField("jpeg-chroma-subsample") == "4:4:4")
        let subsampled = try encode(photo, EncoderSettings(format: .jpeg, quality: 95, chromaSubsampling: .subsample420))
        #expect(subsampled.image.stringField("jpeg-chroma-subsample") == "4:2:0")
    }

    @Test func jpegOfAnImageWithAlphaIsFlattenedOnTheBackground() throws {
        let transparent = try Fixtures.solid(width: 16, height: 16, colour: [0, 0, 0, 0])
        let white = try encode(transparent, EncoderSettings(format: .jpeg, quality: 95))
        #expect(white.image.bands == 3)
        #expect(Fixtures.isClose(try white.image.pixel(x: 8, y: 8), [255, 255, 255], tolerance: 3))
        let red = try encode(transparent, EncoderSettings(format: .jpeg, quality: 95, background: [255, 0, 0, 255]))
        #expect(Fixtures.isClose(try red.image.pixel(x: 8, y: 8), [255, 0, 0], tolerance: 10))
    }

    @Test func jpegOfAGreyOrSixteenBitImageWithAlphaIsFlattenedOnTheBackgroundToo() throws {
        // Given a transparent grey image, and a transparent 16-bit one
        let grey = try Fixtures.solid(width: 16, height: 16, colour: [0, 0]).labelled(as: .blackAndWhite)
        let deep = try Fixtures.solid(width: 16, height: 16, colour: [0, 0, 0, 0]).cast(to: .ushort).labelled(as: .rgb16)
        let settings = { (background: [Double]) in EncoderSettings(format: .jpeg, quality: 95, background: background) }
        // Then a colour that is not a grey makes the grey one colour, and shows as itself
        let red = try encode(grey, settings([255, 0, 0, 255]))
        #expect(red.image.bands == 3)
        #expect(Fixtures.isClose(try red.image.pixel(x: 8, y: 8), [255, 0, 0], tolerance: 10))
        // a grey keeps it grey, at that grey
        let mid = try encode(grey, settings([128, 128, 128, 255]))
        #expect(mid.image.bands == 1)
        #expect(Fixtures.isClose(try mid.image.pixel(x: 8, y: 8), [128], tolerance: 3))
        // and the 16-bit one is flattened on the colour, not on its value out of 65535
        let white = try encode(deep, settings([255, 255, 255, 255]))
        #expect(Fixtures.isClose(try white.image.pixel(x: 8, y: 8), [255, 255, 255], tolerance: 3))
    }

    @Test func heicLosslessKeepsEveryPixelWithinALevel() throws {
        // Noise, whose colour libheif's default halving of chroma changed by tens of levels
        let photo = try Fixtures.noise(width: 96, height: 64)
        let lossless = try encode(photo, EncoderSettings(format: .heic, lossless: true, effort: 0))
        // Within libheif's rounding of its conversion to YCbCr and back
        let (a, b) = (try lossless.image.bytes(), try photo.bytes())
        #expect(a.count == b.count)
        #expect(zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 99 <= 1)
    }

    @Test func pngIsLosslessAndPaletteQuantises() throws {
        let photo = try Fixtures.gradient(width: 64, height: 64, bands: 4)
        let plain = try encode(photo, EncoderSettings(format: .png, compression: 9))
        #expect(plain.image.bands == 4)
        #expect(try plain.image.pixel(x: 10, y: 20) == (try photo.pixel(x: 10, y: 20)))
        let palette = try encode(photo, EncoderSettings(format: .png, palette: true))
        #expect(palette.image.intField("palette-bit-depth") != nil)
    }

    @Test func webpLosslessKeepsEveryPixelAndLossyIsSmaller() throws {
        let photo = try Fixtures.noise(width: 96, height: 64)
        let lossless = try encode(photo, EncoderSettings(format: .webp, lossless: true))
        for (x, y) in [(0, 0), (50, 30), (95, 63)] {
            #expect(try lossless.image.pixel(x: x, y: y) == (try photo.pixel(x: x, y: y)))
        }
        let lossy = try encode(photo, EncoderSettings(format: .webp, quality: 50, effort: 6))
        #expect(lossy.bytes < lossless.bytes)
        #expect(lossy.image.loader?.hasPrefix("webpload") == true)
    }

    @Test func avifIsWrittenAndReadsBack() throws {
        let photo = try Fixtures.gradient(width: 64, height: 48)
        let avif = try encode(photo, EncoderSettings(format: .avif, quality: 60, effort: 2))
        #expect(avif.image.size == ImageSize(width: 64, height: 48))
        #expect(avif.image.loader?.hasPrefix("heifload") == true)
    }

    @Test func stripRemovesMetadata() throws {
        let tagged = try Fixtures.solid(width: 32, height: 32).settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
        var keepingAll = EncoderSettings(format: .jpeg)
        keepingAll.keep = Set(EncoderSettings.Metadata.allCases)
        #expect(try encode(tagged, keepingAll).image.hasField("exif-ifd0-Make"))
        let stripped = try encode(tagged, EncoderSettings(format: .jpeg, strip: true))
        #expect(!stripped.image.hasField("exif-data"))
        // An image not turned upright keeps the orientation a viewer turns it by, and nothing more
        let turned = try encode(try tagged.withOrientation(3), EncoderSettings(format: .jpeg, strip: true))
        #expect(turned.image.orientation == 3)
        #expect(!turned.image.hasField("exif-ifd0-Make"))
    }

    /// libvips' savers make an EXIF block of the image's size and resolution whenever they write
    /// any metadata (WebP's even with strip): a file that keeps no EXIF has none, streamed or
    /// searched, and keeps its profile; a kept block, and the orientation of an image not turned
    /// upright, stay.
    @Test(arguments: [EncoderSettings.Format.jpeg, .webp, .avif])
    func aFileThatKeepsNoEXIFHasNoEXIFBlock(format: EncoderSettings.Format) throws {
        let photo = try Fixtures.gradient(width: 64, height: 48)
        var profiled = EncoderSettings(format: format, quality: 70, effort: 2)
        profiled.iccProfile = "srgb"
        var searched = profiled
        searched.qualityTarget = QualityTarget(ssimulacra2: 60)
        for settings in [profiled, searched, EncoderSettings(format: format, quality: 70, strip: true, effort: 2)] {
            let file = try encode(photo, settings)
            #expect(!file.image.hasField("exif-data"), "\(format), keeping \(settings.keptMetadata)")
            #expect(file.image.hasField("icc-profile-data") == !settings.keptMetadata.isEmpty, "\(format)")
        }
        // The orientation of an image not turned upright is what a viewer turns it by (libvips
        // reads no orientation from an AVIF's EXIF).
        let turned = try encode(try photo.withOrientation(6), profiled)
        #expect(turned.image.hasField("exif-data") && (format == .avif || turned.image.orientation == 6), "\(format)")
        // with nothing kept too: the pixels are shown as stored without it
        let stripped = EncoderSettings(format: format, quality: 70, strip: true, effort: 2)
        if format != .avif { #expect(try encode(try photo.withOrientation(6), stripped).image.orientation == 6, "\(format)") }
        var keepingEXIF = profiled
        keepingEXIF.keep = [.exif, .icc]
        let tagged = try photo.settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
        #expect(try encode(tagged, keepingEXIF).image.hasField("exif-data"), "\(format)")
    }

    /// libpng writes a kept EXIF block twice, before the image data and after it.
    @Test func aPNGKeepingEXIFHoldsOneEXIFChunk() throws {
        // A camera's EXIF block, as a JPEG written with its Make reads back
        let camera = try Fixtures.gradient(width: 64, height: 48).settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
        let tagged = try VipsImage.open(data: try camera.encoded(suffix: ".jpg")).rendered()
        #expect(tagged.hasField("exif-data"))
        var keepingEXIF = EncoderSettings(format: .png)
        keepingEXIF.keep = [.exif]
        let file = try encode(tagged, keepingEXIF)
        // Each chunk: its length, its type, its data and a CRC
        var types: [String] = []
        var offset = 8
        while offset + 12 <= file.data.count, types.count < 1000 {
            let length = try #require(file.data.storedInteger(at: offset))
            types.append(String(decoding: file.data[offset + 4..<offset + 8], as: UTF8.self))
            offset += 12 + length
        }
        #expect(types.filter { $0 == "eXIf" }.count == 1, "\(types)")
        #expect(types.last == "IEND")
        #expect(file.image.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
    }

    @Test func saverSuffixCarriesTheOptions() {
        #expect(
            EncoderSettings(format: .jpeg, quality: 85, strip: true, progressive: true).vipsSuffix == ".jpg[Q=85,interlace=true,strip=true]"
        )
        #expect(EncoderSettings(format: .webp, quality: 80).vipsSuffix == ".webp[Q=80,lossless=false,effort=4]")
        #expect(EncoderSettings(format: .png, palette: true).vipsSuffix == ".png[compression=6,palette=true,Q=100,effort=7]")
    }
}
