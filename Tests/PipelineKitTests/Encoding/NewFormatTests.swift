import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The GIF, JPEG XL, HEIC and TIFF encoders, metadata kept or dropped, colour profiles
/// converted to: written by a real run, read back with libvips.
@Suite struct NewFormatTests {
    /// A 64×48 JPEG carrying a camera name in its EXIF block and an sRGB profile.
    func taggedJPEG(orientation: Int = 1) throws -> Data {
        let image = try Fixtures.gradient(width: 64, height: 48).convertedToProfile("srgb")
            .settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
            .settingStringField("exif-ifd3-GPSLatitudeRef", to: "N").withOrientation(orientation)
        return try image.encoded(suffix: ".jpg[Q=95]")
    }

    func run(_ outputs: [String], input: Data, name: String = "photo.jpg") async throws -> (TemporaryDirectory, [ItemReport], RunSummary) {
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/" + name)
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: directory)
        return (directory, reports, summary)
    }

    func open(_ directory: TemporaryDirectory, _ path: String, options: String = "") throws -> VipsImage {
        try VipsImage.open(file: directory.path + "/" + path, options: options)
    }

    @Test func oneRunWritesGifJpegXLHeicAndTiffThatLibvipsReadsAsSuch() async throws {
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "gif", "encode": {"format": "gif", "effort": 3, "dither": 0.5, "bitdepth": 4, "loop": 3}, "path": "out/{stem}.{format}"}"#,
                #"{"name": "jxl", "encode": {"format": "jxl", "distance": 2.5, "effort": 4}, "path": "out/{stem}.{format}"}"#,
                #"{"name": "jxl-lossless", "encode": {"format": "jxl", "lossless": true, "effort": 3}, "path": "out/{stem}-lossless.jxl"}"#,
                #"{"name": "heic", "encode": {"format": "heic", "quality": 60, "effort": 1, "chromaSubsampling": "4:4:4"}, "path": "out/{stem}.{format}"}"#,
                #"{"name": "tiff", "encode": {"format": "tiff", "compression": "deflate", "tile": true, "tileSize": 32, "pyramid": true}, "path": "out/{stem}.{format}"}"#,
                #"{"name": "tiff-jpeg", "encode": {"format": "tiff", "compression": "jpeg", "quality": 70}, "path": "out/{stem}-jpeg.tif"}"#,
            ], input: try taggedJPEG())
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")

        let gif = try open(directory, "out/photo.gif")
        #expect(gif.loader?.hasPrefix("gifload") == true)
        #expect(gif.size == ImageSize(width: 64, height: 48))
        #expect(gif.intField("loop") == 3)
        // Four bits a pixel: at most 16 colours in the file's palette.
        #expect(try Set(gif.rendered().bytes().chunked(gif.bands)).count <= 16)

        // libvips' command-line tools read the files back, outside the pipeline's process.
        let jxl = try Self.tool(["vipsheader", "-f", "vips-loader", directory.path + "/out/photo.jxl"])
        #expect(jxl.output.hasPrefix("jxlload"), "\(jxl.output)")
        let jxlWidth = try Self.tool(["vipsheader", "-f", "width", directory.path + "/out/photo.jxl"])
        #expect(jxlWidth.output.trimmingCharacters(in: .whitespacesAndNewlines) == "64")
        let converted = try Self.tool(["vips", "copy", directory.path + "/out/photo-lossless.jxl", directory.path + "/lossless.png"])
        #expect(converted.status == 0, "\(converted.output)")
        let lossless = try open(directory, "lossless.png")
        let decoded = try VipsImage.open(data: try taggedJPEG(), options: "")
        #expect(try lossless.rendered().pixel(x: 10, y: 20) == (try decoded.rendered().pixel(x: 10, y: 20)))

        let heic = try open(directory, "out/photo.heic")
        #expect(heic.loader?.hasPrefix("heifload") == true)
        #expect(heic.stringField("heif-compression") == "hevc")
        #expect(heic.size == ImageSize(width: 64, height: 48))

        let tiff = try open(directory, "out/photo.tiff")
        #expect(tiff.loader?.hasPrefix("tiffload") == true)
        // The full image and its half below it: the pyramid's levels are pages.
        #expect((tiff.intField("n-pages") ?? 1) >= 2)
        let half = try open(directory, "out/photo.tiff", options: "page=1")
        #expect(half.size == ImageSize(width: 32, height: 24))
        let jpegTIFF = try open(directory, "out/photo-jpeg.tif")
        #expect(jpegTIFF.loader?.hasPrefix("tiffload") == true)
        #expect(jpegTIFF.intField("n-pages") ?? 1 == 1)
        let deflateBytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo.tiff")).count
        let jpegBytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo-jpeg.tif")).count
        #expect(jpegBytes < deflateBytes)
    }

    @Test func keepIccKeepsTheProfileAndDropsTheExif() async throws {
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "icc", "encode": {"format": "jpeg", "keep": ["icc"]}, "path": "out/{stem}-icc.jpg"}"#,
                #"{"name": "all", "encode": {"format": "jpeg", "keep": "all"}, "path": "out/{stem}-all.jpg"}"#,
                #"{"name": "none", "encode": {"format": "jpeg", "keep": "none"}, "path": "out/{stem}-none.jpg"}"#,
                #"{"name": "exif", "encode": {"format": "png", "keep": ["exif"]}, "path": "out/{stem}-exif.png"}"#,
                #"{"name": "strip", "encode": {"format": "webp", "strip": true}, "path": "out/{stem}-strip.webp"}"#,
            ], input: try taggedJPEG())
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let all = try open(directory, "out/photo-all.jpg")
        #expect(all.hasICCProfile)
        #expect(all.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
        #expect(all.stringField("exif-ifd3-GPSLatitudeRef")?.hasPrefix("N") == true)
        let icc = try open(directory, "out/photo-icc.jpg")
        #expect(icc.hasICCProfile)
        // libvips 8.14's JPEG saver writes a few tags of its own (resolution, orientation)
        // whenever it does not strip; none of the input's tags survive.
        #expect(icc.stringField("exif-ifd0-Make") == nil)
        let none = try open(directory, "out/photo-none.jpg")
        #expect(!none.hasICCProfile)
        #expect(!none.hasField("exif-data"))
        let exif = try open(directory, "out/photo-exif.png")
        #expect(!exif.hasICCProfile)
        #expect(exif.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
        // libvips 8.14's WebP saver writes its own few EXIF tags even with strip, and wrote the
        // input's profile and EXIF too before they were removed ahead of it.
        let strip = try open(directory, "out/photo-strip.webp")
        #expect(!strip.hasICCProfile)
        #expect(strip.stringField("exif-ifd0-Make") == nil)
    }

    @Test(arguments: ["jpeg", "webp", "avif"])
    func aDefaultOutputKeepsTheProfileAndPublishesNoCameraEXIFOrGPSPosition(format: String) async throws {
        let fileExtension = format == "jpeg" ? "jpg" : format
        // Given a photo whose EXIF names its camera and where it was taken, stored sideways
        let output = #"{"name": "web", "encode": {"format": "\#(format)"}, "path": "out/{stem}.\#(fileExtension)"}"#
        let (directory, reports, summary) = try await run([output], input: try taggedJPEG(orientation: 6))
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // When nothing says what to keep, then the colour profile stays, no tag of the input's
        // EXIF does, and the pixels were turned upright before it went
        let written = try open(directory, "out/photo.\(fileExtension)")
        #expect(written.hasICCProfile)
        #expect(written.stringField("exif-ifd0-Make") == nil)
        #expect(written.stringField("exif-ifd3-GPSLatitudeRef") == nil)
        #expect(written.size == ImageSize(width: 48, height: 64))
        #expect(written.orientation == 1)
    }

    @Test func theThumbnailInAPhotosEXIFIsPublishedOnlyWhenEXIFIsKept() async throws {
        // Given a photo whose EXIF holds a thumbnail of another picture (the uncropped original)
        let thumbnail = try [UInt8](Fixtures.jpeg(try Fixtures.noise(width: 40, height: 30)))
        let photo = try Fixtures.gradient(width: 64, height: 48).convertedToProfile("srgb")
            .settingStringField("exif-ifd0-Make", to: "PipelineTestCamera").settingBlobField("jpeg-thumbnail-data", to: thumbnail)
            .encoded(suffix: ".jpg[Q=95]")
        #expect(
            try VipsImage.open(data: photo).blobLength("jpeg-thumbnail-data") == thumbnail.count,
            "the input holds no thumbnail: the test proves nothing")
        let formats = [("jpeg", "jpg"), ("webp", "webp"), ("avif", "avif"), ("heic", "heic")]
        let outputs =
            formats.map { #"{"name": "\#($0.0)", "encode": {"format": "\#($0.0)"}, "path": "out/{stem}.\#($0.1)"}"# }
            + [
                #"{"name": "webp-none", "encode": {"format": "webp", "keep": "none"}, "path": "out/{stem}-none.webp"}"#,
                #"{"name": "jpeg-xmp", "encode": {"format": "jpeg", "keep": ["xmp", "iptc"]}, "path": "out/{stem}-xmp.jpg"}"#,
                #"{"name": "jpeg-exif", "encode": {"format": "jpeg", "keep": ["exif"]}, "path": "out/{stem}-exif.jpg"}"#,
            ]
        // When it is written by default, with nothing kept, and with other kinds kept
        let (directory, reports, summary) = try await run(outputs, input: photo)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then no file carries the thumbnail's bytes, but the one that keeps EXIF
        let tail = Data(thumbnail.suffix(64))
        for file in formats.map({ "out/photo.\($0.1)" }) + ["out/photo-none.webp", "out/photo-xmp.jpg"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + file))
            #expect(bytes.range(of: tail) == nil, "\(file) holds the EXIF thumbnail")
            #expect(try open(directory, file).blobLength("jpeg-thumbnail-data") == nil, "\(file)")
        }
        let kept = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo-exif.jpg"))
        #expect(kept.range(of: tail) != nil, "keep exif lost the camera's thumbnail")
    }

    @Test func aHEICThatX265CannotCodeFailsItsOutputAndWritesNothing() async throws {
        // Given a long, thin image, which libheif writes as a container without a picture
        let thin = try Fixtures.gradient(width: 16, height: 5000)
        #expect(
            (try? VipsImage.open(data: try thin.encoded(suffix: ".heic"), options: "unlimited")) == nil,
            "libheif writes such a picture now: the test proves nothing")
        // When it is written as HEIC and as WebP
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "heic", "encode": {"format": "heic"}, "path": "out/{stem}.heic"}"#,
                #"{"name": "webp", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#,
            ], input: try thin.encoded(suffix: ".png"), name: "thin.png")
        // Then the HEIC output fails at the encode, saying why, and only the WebP is written
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.stage == .encode && failure.output == "heic", "\(failure)")
        #expect(failure.reason.contains("x265 coded no picture of 16×5000"), "\(failure.reason)")
        #expect(directory.allFiles().filter { !$0.hasPrefix(".pipeline-cache/") } == ["in/thin.png", "out/thin.webp"])

        // And the failures of an output of several files say which file each is
        let (_, variantReports, _) = try await run(
            [#"{"name": "tall", "widths": [15, 16], "formats": ["heic"], "path": "out/{stem}-{width}.{format}"}"#],
            input: try thin.encoded(suffix: ".png"), name: "thin.png")
        let descriptions = (variantReports.first?.failures ?? []).map(\.description).sorted()
        #expect(descriptions.count == 2 && descriptions.allSatisfy { $0.contains("x265 coded no picture") }, "\(descriptions)")
        #expect(
            descriptions.map { String($0.prefix { $0 != ":" }) } == [
                "in/thin.png → tall (15 px, heic)", "in/thin.png → tall (16 px, heic)",
            ])
    }

    @Test func orientationIsOneOnceThePixelsAreTurnedUpright() async throws {
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "all", "encode": {"format": "jpeg", "keep": "all"}, "path": "out/{stem}.jpg"}"#
            ], input: try taggedJPEG(orientation: 6))
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let upright = try open(directory, "out/photo.jpg")
        #expect(upright.size == ImageSize(width: 48, height: 64))
        #expect(upright.orientation == 1)
        #expect(upright.stringField("exif-ifd0-Orientation")?.hasPrefix("1") == true)
        #expect(upright.stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
    }

    @Test func iccProfileP3ConvertsTheColoursAndEmbedsDisplayP3() async throws {
        let red = try Fixtures.solid(width: 16, height: 16, colour: [255, 0, 0]).encoded(suffix: ".png")
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "p3", "encode": {"format": "png", "iccProfile": "p3"}, "path": "out/{stem}-p3.png"}"#,
                #"{"name": "p3-stripped", "encode": {"format": "png", "iccProfile": "p3", "keep": "none"}, "path": "out/{stem}-p3-stripped.png"}"#,
                #"{"name": "plain", "encode": {"format": "png"}, "path": "out/{stem}-plain.png"}"#,
            ], input: red, name: "red.png")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        for file in ["out/red-p3.png", "out/red-p3-stripped.png"] {
            let p3 = try open(directory, file)
            let profile = try #require(p3.iccProfileBytes)
            #expect(Self.description(of: profile)?.contains("P3") == true, "\(file)")
            // Display P3's red primary, adapted to D50 as ICC profiles hold it.
            #expect(abs((Self.redPrimaryX(of: profile) ?? 0) - 0.515) < 0.01)
            // sRGB's pure red lies inside P3: less than full red there, with some green.
            let pixel = try p3.rendered().pixel(x: 8, y: 8)
            #expect(pixel[0] < 245 && pixel[1] > 20, "\(pixel)")
        }
        let plain = try open(directory, "out/red-plain.png")
        #expect(Self.description(of: plain.iccProfileBytes ?? [])?.contains("P3") != true)
        #expect(Fixtures.isClose(try plain.rendered().pixel(x: 8, y: 8), [255, 0, 0], tolerance: 1))
    }

    /// lcms takes an sRGB image to the profile: a greyscale one, with or without alpha, or made
    /// grey by a step, is made colour first; it failed "unable to load or find any compatible
    /// input profile". An alpha band (of grey, or of colour: `bands` 4) is flattened before CMYK,
    /// as before any JPEG.
    @Test(arguments: [1, 2, 3, 4])
    func iccProfileConvertsAGreyscaleImage(bands: Int) async throws {
        let grey = try Fixtures.gradient(width: 16, height: 16, bands: bands).encoded(suffix: ".png")
        let step = bands == 3 ? #""steps": [{"greyscale": {}}], "# : ""
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "p3", \#(step)"encode": {"format": "png", "iccProfile": "p3"}, "path": "out/{stem}-p3.png"}"#,
                #"{"name": "cmyk", \#(step)"encode": {"format": "jpeg", "iccProfile": "cmyk"}, "path": "out/{stem}-cmyk.jpg"}"#,
            ], input: grey, name: "grey.png")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let p3 = try open(directory, "out/grey-p3.png")
        #expect(Self.description(of: try #require(p3.iccProfileBytes))?.contains("P3") == true)
        #expect(p3.colourBands == 3 && p3.hasAlpha == (bands % 2 == 0))
        // A grey stays grey in P3: its three bands alike
        let pixel = try p3.rendered().pixel(x: 8, y: 8)
        #expect(bands == 4 || (abs(pixel[0] - pixel[1]) <= 2 && abs(pixel[1] - pixel[2]) <= 2), "\(pixel)")
        #expect(try open(directory, "out/grey-cmyk.jpg").bands == 4)
    }

    @Test func malformedPNGTextKeysAreDroppedWithAWarningInsteadOfFailingTheOutput() async throws {
        let plain = [UInt8](try Fixtures.solid(width: 8, height: 8).encoded(suffix: ".png"))
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + payload
            return HostileFixtures.bigEndian32(payload.count) + typed + HostileFixtures.bigEndian32(Int(HostileFixtures.crc32(typed)))
        }
        // tEXt chunks whose keyword is empty, as libpng's empty_ancillary_chunks.png has, beside a good one.
        let texts = chunk("tEXt", [0] + Array("no key".utf8)) + chunk("tEXt", Array("Comment".utf8) + [0] + Array("kept".utf8))
        let png = Data(plain[..<33] + texts + plain[33...])
        #expect(try VipsImage.open(data: png).hasField("png-comment-0-"))

        let (directory, reports, summary) = try await run(
            [
                #"{"name": "png", "encode": {"format": "png", "keep": ["icc", "xmp"]}, "path": "out/{stem}.png"}"#,
                #"{"name": "webp", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#,
            ], input: png, name: "texts.png")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let out = try open(directory, "out/texts.png")
        #expect(out.stringField("png-comment-0-Comment") == "kept" || out.stringField("png-comment-1-Comment") == "kept")
        let warnings = reports.flatMap(\.written).flatMap(\.warnings)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("texts.png") == true)
        #expect(warnings.first?.contains("png-comment-0-") == true)
    }

    @Test func aPNGsTextAndATIFFsDescriptionArePublishedOnlyWhenXMPIsKept() async throws {
        // Given a PNG with an author and a comment, and a TIFF with a description
        let image = try Fixtures.gradient(width: 32, height: 24)
        let png = try image.settingStringField("png-comment-0-Author", to: "Jane Secret")
            .settingStringField("png-comment-1-Comment", to: "a private note").encoded(suffix: ".png")
        let tiff = try image.settingStringField("image-description", to: "a private note").encoded(suffix: ".tif")
        for (input, name, format) in [(png, "texts.png", "png"), (tiff, "described.tif", "tiff")] {
            // When each is written by default, and keeping XMP
            let (directory, reports, summary) = try await run(
                [
                    #"{"name": "plain", "encode": {"format": "\#(format)"}, "path": "out/{stem}.\#(format)"}"#,
                    #"{"name": "kept", "encode": {"format": "\#(format)", "keep": ["xmp"]}, "path": "out/{stem}-kept.\#(format)"}"#,
                ], input: Data(input), name: name)
            #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
            // Then the text is in the file only when asked for
            let stem = (name as NSString).deletingPathExtension
            let fields = ["png-comment-0-Author", "png-comment-1-Comment", "image-description"]
            let plain = try open(directory, "out/\(stem).\(format)")
            #expect(fields.allSatisfy { !plain.hasField($0) }, "\(name): \(plain.fieldNames)")
            let kept = try open(directory, "out/\(stem)-kept.\(format)")
            #expect(fields.contains { kept.stringField($0)?.contains("a private note") == true }, "\(name): \(kept.fieldNames)")
        }
    }

    /// PNG's text chunks, kept with XMP, have a place in PNG alone: written as JPEG, WebP or
    /// AVIF they are dropped with a warning, as GIF and JPEG XL drop them, not without a word.
    @Test(arguments: ["jpeg", "webp", "avif"]) func aPNGsTextKeptInAnotherFormatIsDroppedWithAWarning(format: String) async throws {
        let png = try Fixtures.gradient(width: 32, height: 24).settingStringField("png-comment-0-Author", to: "Jane")
            .encoded(suffix: ".png")
        let (_, reports, summary) = try await run(
            [#"{"name": "kept", "encode": {"format": "\#(format)", "keep": "all"}, "path": "out/{stem}.\#(format)"}"#],
            input: Data(png), name: "texts.png")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let warnings = reports.flatMap(\.written).flatMap(\.warnings)
        let said = "in/texts.png → kept: dropped the metadata field png-comment-0-Author (a PNG text chunk, which only PNG holds), "
        #expect(warnings == [said + "which \(format) cannot write"], "\(warnings)")
    }

    /// A WebP, a GIF, a JPEG or a HEIC with a side longer than its format holds fails with the same
    /// reason each time, and the run's other outputs are made; libvips' own message was now and
    /// then lost to "save failed", and said only "frame too large" for GIF.
    @Test(arguments: [
        ("webp", 40, 17000, "a WebP side holds at most 16383 pixels"), ("gif", 65536, 2, "a GIF side holds at most 65535 pixels"),
        ("jpeg", 65501, 2, "a JPEG side holds at most 65500 pixels"), ("heic", 16385, 64, "a HEIC side of at most 16384 pixels"),
    ])
    func anImageLargerThanItsFormatHoldsFailsWithTheSameReasonEachTime(format: String, width: Int, height: Int, limit: String) async throws
    {
        let large = try Fixtures.png(try Fixtures.solid(width: width, height: height, colour: Fixtures.grey))
        for _ in 0..<3 {
            let (_, reports, _) = try await run(
                [
                    #"{"name": "large", "encode": {"format": "\#(format)"}, "path": "out/{stem}.\#(format)"}"#,
                    #"{"name": "png", "steps": [{"resize": {"width": 4}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
                ], input: large, name: "large.png")
            #expect(reports.flatMap(\.written).map(\.output) == ["png"])
            let failure = try #require(reports.first?.failures.first)
            #expect(failure.stage == .encode)
            #expect(failure.reason.contains("\(limit), and this is \(width)×\(height)"), "\(failure.reason)")
        }
    }

    /// libtiff writes a WebP-compressed strip wider than WebP holds as a file without its
    /// pixels, and says nothing: such an output fails with a reason, and tiles are made.
    @Test func aTIFFTooWideForWebPStripsFailsAndItsTilesAreMade() async throws {
        let wide = try Fixtures.png(try Fixtures.solid(width: 16384, height: 2, colour: Fixtures.grey))
        let (directory, reports, _) = try await run(
            [
                #"{"name": "strips", "encode": {"format": "tiff", "compression": "webp"}, "path": "out/{stem}.tiff"}"#,
                #"{"name": "tiles", "encode": {"format": "tiff", "compression": "webp", "tile": true}, "path": "out/{stem}.tiled.tiff"}"#,
            ], input: wide, name: "wide.png")
        #expect(reports.flatMap(\.written).map(\.output) == ["tiles"])
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.stage == .encode)
        #expect(failure.reason.contains("at most 16383 pixels a side, and this is 16384 pixels wide"), "\(failure.reason)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/wide.tiff"))
        // The last tile, past the width a strip could hold, is read back grey.
        let grey = try open(directory, "out/wide.tiled.tiff", options: "fail=true").pixel(x: 16383, y: 1)
        #expect(grey.prefix(3).allSatisfy { abs($0 - 128) <= 4 }, "\(grey)")
    }

    @Test func changingKeepOrTheProfileMakesTheOutputAgainInAnIncrementalRun() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try taggedJPEG(), to: "in/photo.jpg")
        func run(_ encode: String) async throws -> RunSummary {
            let json = PipelineHarness.json(
                inputs: ["in/*"], outputs: [#"{"name": "o", "encode": \#(encode), "path": "out/{stem}.jpg"}"#],
                extra: #""incremental": true"#)
            return try await PipelineHarness.run(json, in: directory).summary
        }
        let first = try await run(#"{"format": "jpeg"}"#)
        #expect(first.outputsWritten == 1)
        #expect(try await run(#"{"format": "jpeg"}"#).outputsUpToDate == 1)
        // The default is the colour profile alone, so saying so changes nothing.
        #expect(try await run(#"{"format": "jpeg", "keep": ["icc"]}"#).outputsUpToDate == 1)
        #expect(try await run(#"{"format": "jpeg", "keep": "all"}"#).outputsWritten == 1)
        #expect(try open(directory, "out/photo.jpg").stringField("exif-ifd0-Make")?.hasPrefix("PipelineTestCamera") == true)
        #expect(try await run(#"{"format": "jpeg", "keep": "all"}"#).outputsUpToDate == 1)
        #expect(try await run(#"{"format": "jpeg", "keep": ["icc"], "iccProfile": "p3"}"#).outputsWritten == 1)
        #expect(try open(directory, "out/photo.jpg").stringField("exif-ifd0-Make") == nil)
    }

    @Test func formatsOfAResponsiveOutputTakeTheNewFormatsWithTheirMIMETypes() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try taggedJPEG(), to: "in/photo.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "r", "widths": [32], "formats": [{"format": "jxl"}, {"format": "heic"}, {"format": "gif"}, {"format": "tiff"}], "path": "out/{stem}-{width}.{format}"}"#
            ], extra: #""manifest": {"path": "manifest.json", "urlPrefix": "/img/"}"#)
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        for ext in ["jxl", "heic", "gif", "tiff"] {
            #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo-32.\(ext)"), "\(ext)")
        }
        let manifest = try ImageManifest.read(from: URL(fileURLWithPath: directory.path + "/manifest.json"))
        let types = manifest.inputs.first?.outputs["r"]?.formats.map(\.mimeType) ?? []
        #expect(types == ["image/jxl", "image/heic", "image/gif", "image/tiff"])
    }
}

extension Array where Element == UInt8 {
    /// The bytes in groups of `size` (a pixel's bands).
    fileprivate func chunked(_ size: Int) -> [[UInt8]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
