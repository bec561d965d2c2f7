import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The decompress stage: upright, sRGB, 8-bit, shrunk on load, refusing what it must.
@Suite struct DecoderTests {
    static let settings = DecompressSettings(concurrency: 1, maxPixels: 100_000_000, autorotate: true, failOn: .truncated)

    func decode(_ data: Data, settings: DecompressSettings = DecoderTests.settings, outputs: [OutputDefinition] = []) throws -> DecodedImage
    {
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: "input")
        return try ImageDecoder(settings: settings, outputs: outputs).decode(.file(path: path, byteCount: Int64(data.count)))
    }

    /// Where the stored pixel (x, y) of a `width`×`height` image appears once turned upright.
    static func displayed(x: Int, y: Int, width: Int, height: Int, orientation: Int) -> (Int, Int) {
        switch orientation {
        case 2: (width - 1 - x, y)
        case 3: (width - 1 - x, height - 1 - y)
        case 4: (x, height - 1 - y)
        case 5: (y, x)
        case 6: (height - 1 - y, x)
        case 7: (height - 1 - y, width - 1 - x)
        case 8: (y, width - 1 - x)
        default: (x, y)
        }
    }

    @Test(arguments: 1...8)
    func exifOrientationIsAppliedToJPEG(orientation: Int) throws {
        // Given a landscape JPEG with a red top-left quadrant, tagged with an orientation
        let (width, height) = (64, 32)
        let stored = try Fixtures.redCorner(width: width, height: height).withOrientation(orientation)
        // When it is decoded with autorotate on
        let decoded = try decode(try Fixtures.jpeg(stored))
        // Then its size is swapped for the quarter turns and the red quadrant moved as EXIF says
        let swapped = orientation >= 5
        #expect(decoded.image.width == (swapped ? height : width))
        #expect(decoded.image.height == (swapped ? width : height))
        #expect(decoded.originalSize == decoded.image.size)
        #expect(decoded.image.orientation == 1)
        let (x, y) = Self.displayed(x: width / 4, y: height / 4, width: width, height: height, orientation: orientation)
        #expect(
            Fixtures.isClose(try decoded.image.pixel(x: x, y: y), [255, 0, 0], tolerance: Fixtures.lossyTolerance),
            "orientation \(orientation)")
        let (otherX, otherY) = Self.displayed(x: 3 * width / 4, y: 3 * height / 4, width: width, height: height, orientation: orientation)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: otherX, y: otherY), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
    }

    @Test func autorotateOffKeepsThePixelsAsStored() throws {
        let stored = try Fixtures.redCorner(width: 64, height: 32).withOrientation(6)
        var settings = Self.settings
        settings.autorotate = false
        let decoded = try decode(try Fixtures.jpeg(stored), settings: settings)
        #expect(decoded.image.size == ImageSize(width: 64, height: 32))
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 8, y: 8), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
    }

    /// A PNG is read whole (libdeflate) while the allowance has room and streams through
    /// libvips' loader when it has none: the same pixels either way, and the allowance is
    /// given back when the decode is done.
    @Test func aPNGReadWholeOrStreamedGivesTheSamePixels() throws {
        let png = try Fixtures.gradient(width: 300, height: 200, bands: 4).encoded(suffix: ".png[filter=all]")
        let directory = try TemporaryDirectory()
        let path = try directory.write(png, to: "input.png")
        let source = EncodedSource.file(path: path, byteCount: Int64(png.count))
        let roomy = MemoryAdmission(capacity: 1 << 30), none = MemoryAdmission(capacity: 0)

        let whole = try ImageDecoder(settings: Self.settings, outputs: [], wholePNGAllowance: roomy).decode(source)
        let streamed = try ImageDecoder(settings: Self.settings, outputs: [], wholePNGAllowance: none).decode(source)

        // Its rows, one filter byte each, and its file.
        #expect(roomy.peakAdmitted == Int64((300 * 4 + 1) * 200 + png.count))
        #expect(roomy.admitNow(roomy.capacity), "the decode kept part of the allowance")
        #expect(none.peakAdmitted == 0)
        #expect(whole.image.size == streamed.image.size && whole.image.bands == 4)
        #expect(try whole.image.bytes() == streamed.image.bytes())
    }

    /// A large LZW TIFF is decoded with its strips read ahead on worker threads, each strip
    /// once, to the same pixels as libvips' own loader gives (which the decoder uses when
    /// `failOn` is `none`), shrunk to what the output needs.
    @Test func aLargeTIFFReadWithStripsAheadGivesLibvipsPixels() throws {
        let tiff = try Fixtures.gradient(width: 2400, height: 1300, bands: 3).encoded(suffix: ".tif[compression=lzw,predictor=horizontal]")
        let directory = try TemporaryDirectory()
        let path = try directory.write(tiff, to: "input.tif")
        let source = EncodedSource.file(path: path, byteCount: Int64(tiff.count))
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 500}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ])
        let output = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
        Vips.setThreadsPerImage(1)  // as a run sets it

        let ahead = try ImageDecoder(settings: Self.settings, outputs: output).decode(source)
        var lenient = Self.settings
        lenient.failOn = .none
        let libvips = try ImageDecoder(settings: lenient, outputs: output).decode(source)

        #expect(VipsImage.readingAhead(file: path).readers == 1)
        #expect(VipsImage.readingAhead(file: path).groupsDecodedAgain == 0)
        #expect(ahead.image.size == ImageSize(width: 500, height: 271) && ahead.loader.hasPrefix("tiffload"))
        #expect(try ahead.image.bytes() == libvips.image.bytes())

        // Admission by memory weighs the strips in flight too (and, for fetched bytes, the bytes
        // held, which the strip readers read where they are: no copy).
        let readAhead = Int64(try #require(VipsImage.stripReadAhead(file: path, header: VipsImage.open(file: path))).heldBytes)
        #expect(readAhead >= 2 * 2400 * 3 * 64, "at least two groups of 64 rows")
        let needs = try #require(ImageDecoder(settings: Self.settings, outputs: output).memoryNeeds(of: source))
        let needsWithout = try #require(ImageDecoder(settings: lenient, outputs: output).memoryNeeds(of: source))
        #expect(needs.estimate == needsWithout.estimate + readAhead)
        let fetchedNeeds = try #require(ImageDecoder(settings: Self.settings, outputs: output).memoryNeeds(of: .memory(VipsBytes(tiff))))
        #expect(fetchedNeeds.estimate == needsWithout.estimate + readAhead + Int64(tiff.count))

        // Fetched bytes (an input over HTTP) are read ahead the same way.
        let fetchedBefore = VipsImage.readingAhead(file: EncodedSource.fetchedName).readers
        let fetched = try ImageDecoder(settings: Self.settings, outputs: output).decode(.memory(VipsBytes(tiff)))
        #expect(VipsImage.readingAhead(file: EncodedSource.fetchedName).readers == fetchedBefore + 1)
        #expect(try fetched.image.bytes() == libvips.image.bytes())
    }

    @Test func cmykJPEGBecomesSRGB() throws {
        let cmyk = try Fixtures.solid(width: 32, height: 32, colour: [200, 30, 30]).converted(to: .cmyk)
        let data = try cmyk.encoded(suffix: ".jpg[Q=95]")
        #expect(try VipsImage.open(data: data).interpretation == .cmyk)
        let decoded = try decode(data)
        #expect(decoded.image.interpretation == .sRGB)
        #expect(decoded.image.bands == 3)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 16, y: 16), [200, 30, 30], tolerance: 60))
    }

    @Test func aCMYKJPEGWithoutAProfileIsReadThroughLibvipsCMYKProfile() throws {
        // Given mid cyan in CMYK, as a JPEG with libvips' CMYK profile embedded and without one
        let pixels = [UInt8](repeating: 0, count: 16 * 16 * 4).enumerated().map { $0.offset % 4 == 0 ? UInt8(128) : 0 }
        let cyan = try VipsImage(pixels: pixels, width: 16, height: 16, bands: 4).labelled(as: .cmyk)
        let tagged = try cyan.convertedToSRGB(assuming: "cmyk").convertedToProfile("cmyk")
        #expect(tagged.hasICCProfile)
        let withProfile = try decode(try tagged.encoded(suffix: ".jpg[Q=100]"))
        let without = try decode(try tagged.encoded(suffix: ".jpg[Q=100,strip]"))
        // Then both are the same sRGB colour (libvips' colourspace gave a red 24 levels lower)
        let (a, b) = (try withProfile.image.pixel(x: 8, y: 8), try without.image.pixel(x: 8, y: 8))
        #expect(without.image.interpretation == .sRGB)
        #expect(Fixtures.isClose(a, b, tolerance: 2), "\(a) with the profile, \(b) without")
    }

    @Test func sixteenBitPNGBecomesEightBit() throws {
        var pixels: [UInt16] = []
        for _ in 0..<(16 * 16) { pixels += [65535, 32768, 0] }
        let image = try VipsImage(pixels16: pixels, width: 16, height: 16, bands: 3).labelled(as: .rgb16)
        let data = try image.encoded(suffix: ".png[bitdepth=16]")
        #expect(try VipsImage.open(data: data).bandFormat == .ushort)
        let decoded = try decode(data)
        #expect(decoded.image.bandFormat == .uchar)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 4, y: 4), [255, 128, 0], tolerance: 2))
    }

    @Test func alphaIsKept() throws {
        let data = try Fixtures.png(try Fixtures.solid(width: 16, height: 16, colour: [10, 20, 30, 128]))
        let decoded = try decode(data)
        #expect(decoded.image.hasAlpha)
        #expect(try decoded.image.pixel(x: 1, y: 1) == [10, 20, 30, 128])
    }

    @Test func imagesOverMaxPixelsFailFromTheHeader() throws {
        var settings = Self.settings
        settings.maxPixels = 1000
        let data = try Fixtures.jpeg(try Fixtures.solid(width: 100, height: 100))
        #expect {
            try decode(data, settings: settings)
        } throws: { error in
            guard let error = error as? ItemError else { return false }
            return error.stage == .decompress && error.reason.contains("100×100") && error.reason.contains("maxPixels")
        }
    }

    @Test func truncatedJPEGFails() throws {
        let whole = try Fixtures.jpeg(try Fixtures.gradient(width: 256, height: 256))
        let truncated = whole.prefix(whole.count / 2)
        #expect {
            try decode(Data(truncated))
        } throws: { error in
            (error as? ItemError)?.stage == .decompress
        }
    }

    @Test func textWithAnImageExtensionFails() throws {
        #expect {
            try decode(Data("hello, I am not a picture\n".utf8))
        } throws: { error in
            guard let error = error as? ItemError else { return false }
            return error.stage == .decompress && error.reason.contains("not an image")
        }
    }

    @Test(arguments: [
        (1.0, "jpegload_source", 1), (3.9, "jpegload_source", 1), (4.0, "jpegload_source", 2),
        (9.0, "jpegload_source", 4), (40.0, "jpegload_source", 8), (40.0, "pngload_source", 1),
        (16.0, "webpload_source", 1),
    ])
    func carefulShrinkOnLoadLeavesAFactorOfTwoForResampling(allowed: Double, loader: String, expected: Int) {
        #expect(
            DecodePlan.loadShrink(allowed: allowed, loader: loader, fast: false, stored: ImageSize(width: 4000, height: 3000)) == expected)
    }

    @Test(arguments: [
        ("svgload_source", "scale=0.01875"), ("pdfload_source", "scale=0.01875"), ("webpload_source", "scale=0.01875"),
        ("jpegload_source", "shrink=8"), ("pngload_source", nil),
    ])
    func vectorAndWebPFilesAreReadStraightAtTheScaleTheOutputsNeed(loader: String, expected: String?) {
        // Given a 16000×16000 file whose outputs need 300×300: an SVG filter drawn at the
        // stored size would take minutes and gigabytes in one call no deadline can stop
        let scaling = DecodePlan.loadScaling(
            loader: loader, stored: ImageSize(width: 16000, height: 16000), target: ImageSize(width: 300, height: 300),
            allowed: 16000.0 / 300, fast: false)
        #expect(scaling.options == (expected.map { [$0] } ?? []))
        #expect(scaling.shrink == (loader.hasPrefix("png") ? 1 : loader.hasPrefix("jpeg") ? 8 : 53))
    }

    @Test func aFileKeptAtItsSizeIsReadWithoutAScale() {
        let size = ImageSize(width: 40, height: 20)
        let scaling = DecodePlan.loadScaling(loader: "svgload_source", stored: size, target: size, allowed: 1, fast: true)
        #expect(scaling.options.isEmpty)
        #expect(scaling.shrink == 1)
    }

    @Test(arguments: [
        (1.9, "jpegload_source", 1), (2.0, "jpegload_source", 2), (4.4, "jpegload_source", 4),
        (7.9, "jpegload_source", 4), (8.0, "jpegload_source", 8), (40.0, "pngload_source", 1),
    ])
    func fastShrinkOnLoadTakesTheWholeFactor(allowed: Double, loader: String, expected: Int) {
        #expect(
            DecodePlan.loadShrink(allowed: allowed, loader: loader, fast: true, stored: ImageSize(width: 4000, height: 3000)) == expected)
    }

    @Test(arguments: [(1, 1), (2, 2), (3, 2), (7, 4), (8, 8)])
    func shrinkOnLoadNeverPassesTheShorterSide(shortest: Int, expected: Int) {
        // A banner `shortest` pixels high whose outputs allow a shrink of 8: shrunk by more than
        // its height, it would have no rows
        for stored in [ImageSize(width: 1600, height: shortest), ImageSize(width: shortest, height: 1600)] {
            #expect(DecodePlan.loadShrink(allowed: 8, loader: "jpegload_source", fast: true, stored: stored) == expected)
        }
    }
}
