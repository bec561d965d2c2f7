import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Unusual but valid images come out right: upright from EXIF in WebP and PNG as in JPEG,
/// the first frame of an animation, colour through ICC profiles, grey, palette and alpha.
@Suite struct UnusualImageTests {
    func decode(_ data: Data, name: String = "input") throws -> DecodedImage {
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: name)
        return try ImageDecoder(settings: DecoderTests.settings, outputs: []).decode(.file(path: path, byteCount: Int64(data.count)))
    }

    /// Checks that the red quadrant of a 64×32 `redCorner` image stored with `orientation` shows
    /// where EXIF says it should once decoded.
    func expectUpright(_ decoded: DecodedImage, orientation: Int, tolerance: Double = 40) throws {
        let (width, height) = (64, 32)
        let swapped = orientation >= 5
        #expect(
            decoded.image.size == ImageSize(width: swapped ? height : width, height: swapped ? width : height), "orientation \(orientation)"
        )
        #expect(decoded.image.orientation == 1)
        let (x, y) = DecoderTests.displayed(x: width / 4, y: height / 4, width: width, height: height, orientation: orientation)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: x, y: y), [255, 0, 0], tolerance: tolerance), "orientation \(orientation)")
        let (otherX, otherY) = DecoderTests.displayed(
            x: 3 * width / 4, y: 3 * height / 4, width: width, height: height, orientation: orientation)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: otherX, y: otherY), [0, 0, 255], tolerance: tolerance))
    }

    @Test(arguments: 1...8)
    func exifOrientationIsAppliedToWebP(orientation: Int) throws {
        // libvips 8.14 writes and reads EXIF in WebP
        let stored = try Fixtures.redCorner(width: 64, height: 32).withOrientation(orientation)
        let data = try stored.encoded(suffix: ".webp[Q=95]")
        #expect(try VipsImage.open(data: data).orientation == orientation)
        try expectUpright(try decode(data), orientation: orientation)
    }

    @Test(arguments: 1...8)
    func exifOrientationIsAppliedToPNG(orientation: Int) throws {
        // libvips 8.14 reads a PNG's eXIf chunk (its saver does not write one: the test adds it)
        let data = try HostileFixtures.png(try Fixtures.redCorner(width: 64, height: 32), orientation: orientation)
        #expect(try VipsImage.open(data: data).orientation == orientation)
        try expectUpright(try decode(data), orientation: orientation, tolerance: 0)
    }

    @Test(arguments: ["gif", "webp"])
    func anAnimationDecodesToItsFirstFrame(format: String) throws {
        // Given red, green and blue frames of 40×30
        let data = try HostileFixtures.animation(format)
        #expect(try VipsImage.open(data: data, options: "n=-1").pageCount == 3)
        // When decoded
        let decoded = try decode(data)
        // Then the result is the first frame alone
        #expect(decoded.image.size == ImageSize(width: 40, height: 30))
        #expect(decoded.image.pageHeight == decoded.image.height, "one frame, not a strip of frames")
        // (A GIF decodes with an alpha band: its colour is what is compared.)
        #expect(Fixtures.isClose(Array(try decoded.image.pixel(x: 20, y: 15).prefix(3)), [255, 0, 0], tolerance: 30))
    }

    @Test func aDisplayP3JPEGIsConvertedToSRGBThroughItsProfile() throws {
        // Given an sRGB green stored as Display P3 values with the P3 profile embedded
        let green: [UInt8] = [40, 200, 40]
        let p3 = try Fixtures.solid(width: 16, height: 16, colour: green).convertedFromSRGB(toProfile: "p3")
        let stored = try p3.pixel(x: 8, y: 8)
        #expect(!Fixtures.isClose(stored, [40, 200, 40], tolerance: 20), "P3 values differ from sRGB ones: \(stored)")
        let data = try p3.encoded(suffix: ".jpg[Q=98]")
        #expect(try VipsImage.open(data: data).hasICCProfile)
        // When decoded
        let decoded = try decode(data)
        // Then the pixels are the sRGB colour again, not the P3 numbers
        #expect(decoded.image.interpretation == .sRGB)
        let converted = try decoded.image.pixel(x: 8, y: 8)
        #expect(Fixtures.isClose(converted, [40, 200, 40], tolerance: 8), "\(converted)")
    }

    @Test func anEmbeddedSRGBProfileLeavesThePixelsAndTheProfileAsTheyAre() throws {
        // Given a PNG whose pixels carry an sRGB profile written as a table, as HP's classic
        // sRGB profile is (not libvips' own, which a conversion would put in its place)
        let directory = try TemporaryDirectory()
        let profile = ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbTable)
        let profilePath = try directory.write(Data(profile), to: "srgb-table.icc")
        let image = try Fixtures.image(width: 64, height: 48, bands: 3) { x, y in [UInt8(x * 4), UInt8(y * 5), UInt8((x ^ y) * 3)] }
        let data = try image.convertedFromSRGB(toProfile: profilePath).encoded(suffix: ".png")
        let stored = try VipsImage.open(data: data)
        let storedWithIt = stored.iccProfileBytes == profile
        #expect(storedWithIt && stored.hasSRGBProfile)
        // When decoded at full size
        let decoded = try decode(data, name: "tagged.png")
        // Then nothing converted it: the same pixels, the same profile
        let samePixels = try decoded.image.bytes() == (try stored.bytes())
        let sameProfile = decoded.image.iccProfileBytes == profile
        #expect(
            samePixels && sameProfile,
            "converted: the pixels \(samePixels ? "stayed" : "changed"), the profile \(sameProfile ? "stayed" : "was replaced")")
    }

    @Test func aPaddedOrMislabelledSRGBProfileIsReplacedByLibvipsOwn() throws {
        // Given images whose sRGB profile is padded with a megabyte (its header counting it), or
        // whose header gives another length
        let image = try Fixtures.image(width: 64, height: 48, bands: 3) { x, y in [UInt8(x * 4), UInt8(y * 5), 90] }
        let srgb = try #require(try image.convertedFromSRGB(toProfile: "srgb").iccProfileBytes)
        var mislabelled = srgb
        mislabelled.replaceSubrange(0..<4, with: [0x7F, 0xFF, 0xFF, 0xFF])
        for (profile, suffix) in [(ICCFixtures.padded(srgb, by: 1 << 20), ".png"), (mislabelled, ".jpg[Q=95]")] {
            let data = try image.settingBlobField("icc-profile-data", to: profile).encoded(suffix: suffix)
            try #require(try VipsImage.open(data: data).iccProfileBytes == profile, "\(suffix) keeps the profile as given")
            // When decoded
            let decoded = try decode(data, name: "padded\(suffix)")
            // Then its outputs would carry libvips' own sRGB profile, not those bytes, and the same colours
            #expect(decoded.image.iccProfileBytes == srgb, "\(suffix): \(decoded.image.iccProfileBytes?.count ?? 0) bytes")
            let pixel = try decoded.image.pixel(x: 20, y: 10)
            #expect(Fixtures.isClose(pixel, [80, 50, 90], tolerance: suffix == ".png" ? 2 : 8), "\(suffix): \(pixel)")
        }
        // and one of floating-point samples, whose profile is passed over, goes without it
        let float = try image.cast(to: .float).settingBlobField("icc-profile-data", to: ICCFixtures.padded(srgb, by: 1 << 20))
        let decoded = try decode(try float.encoded(suffix: ".tif"), name: "padded.tif")
        #expect(decoded.image.iccProfileBytes == nil, "\(decoded.image.iccProfileBytes?.count ?? 0) bytes")
    }

    @Test func anAdobeRGBProfileIsStillConverted() throws {
        let directory = try TemporaryDirectory()
        let profilePath = try directory.write(
            Data(ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))),
            to: "adobe.icc")
        let green = try Fixtures.solid(width: 16, height: 16, colour: [40, 200, 40]).convertedFromSRGB(toProfile: profilePath)
        #expect(!Fixtures.isClose(try green.pixel(x: 8, y: 8), [40, 200, 40], tolerance: 20))
        let decoded = try decode(try green.encoded(suffix: ".png"), name: "adobe.png")
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 8, y: 8), [40, 200, 40], tolerance: 8))
    }

    @Test func greyJPEGStaysGreyAndEightBit() throws {
        let data = try Fixtures.solid(width: 16, height: 16, colour: [77]).encoded(suffix: ".jpg[Q=95]")
        let decoded = try decode(data)
        #expect(decoded.image.bands == 1)
        #expect(decoded.image.bandFormat == .uchar)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 8, y: 8), [77], tolerance: 2))
    }

    @Test(arguments: ["png", "jpg"])
    func aGreyImageWithAGreyProfileStaysOneGreyBand(format: String) throws {
        // Given a grey ramp that carries a grey profile of gamma 1.8, as scanners embed
        let directory = try TemporaryDirectory()
        let profilePath = try directory.write(Data(ICCFixtures.greyProfile(curve: ICCFixtures.gammaCurve(1.8))), to: "grey.icc")
        let ramp = try Fixtures.image(width: 64, height: 8, bands: 1) { x, _ in [UInt8(x * 4)] }
        let data = try ramp.settingBlobField("icc-profile-data", to: Array(try Data(contentsOf: URL(fileURLWithPath: profilePath))))
            .encoded(suffix: format == "png" ? ".png" : ".jpg[Q=98]")
        #expect(try VipsImage.open(data: data).hasICCProfile)
        // When decoded
        let decoded = try decode(data, name: "grey.\(format)")
        // Then it is one grey band, with no colour profile, its greys those of its profile
        // (gamma 1.8 shows a mid grey lighter than sRGB's curve would)
        #expect(decoded.image.bands == 1)
        #expect(decoded.image.interpretation == .blackAndWhite)
        #expect(!decoded.image.hasICCProfile)
        let mid = try decoded.image.pixel(x: 32, y: 4)[0]
        #expect(mid > 128 + 8, "\(mid)")
    }

    @Test func palettePNGWithTransparencyKeepsColoursAndAlpha() throws {
        // Given a palette PNG with a transparent half and an opaque red half
        var pixels: [UInt8] = []
        for _ in 0..<16 { for x in 0..<16 { pixels += x < 8 ? [0, 0, 0, 0] : [255, 0, 0, 255] } }
        let data = try VipsImage(pixels: pixels, width: 16, height: 16, bands: 4).encoded(suffix: ".png[palette]")
        #expect(try VipsImage.open(data: data).intField("palette-bit-depth") != nil)
        // When decoded
        let decoded = try decode(data)
        // Then colour and alpha survive
        #expect(decoded.image.hasAlpha)
        #expect(try decoded.image.pixel(x: 12, y: 8) == [255, 0, 0, 255])
        #expect(try decoded.image.pixel(x: 2, y: 8).last == 0)
    }

    @Test func greyWithAlphaPNGKeepsBothBands() throws {
        let data = try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: [90, 128]))
        let decoded = try decode(data)
        #expect(decoded.image.bands == 2)
        #expect(try decoded.image.pixel(x: 4, y: 4) == [90, 128])
    }

    @Test func anExtraChannelPastTheAlphaIsDroppedSoJPEGAndFlattenTakeTheImage() async throws {
        // Given an sRGB TIFF with alpha (half transparent) and an extra channel, 5 bands, as
        // Photoshop writes an extra alpha or spot channel
        let directory = try TemporaryDirectory()
        let stored = try Fixtures.solid(width: 40, height: 30, colour: [200, 40, 40, 128, 77]).labelled(as: .sRGB)
        try directory.write(try stored.encoded(suffix: ".tif"), to: "in/extra.tif")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "j", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#,
                ##"{"name": "f", "steps": [{"flatten": {"background": "#ffffff"}}], "encode": {"format": "png"}, "path": "out/{stem}-flat.png"}"##,
            ])
        // When a JPEG is made and a flattened PNG
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        // Then both are made (libvips' flatten and JPEG saver failed on a fifth band), the fourth
        // band taken as alpha and the fifth dropped
        #expect(summary.succeeded == 1 && summary.failed == 0)
        let jpeg = try VipsImage.open(file: directory.path + "/out/extra.jpg")
        #expect(jpeg.bands == 3)
        let flat = try VipsImage.open(file: directory.path + "/out/extra-flat.png")
        #expect(flat.bands == 3)
        #expect(Fixtures.isClose(try flat.pixel(x: 20, y: 15), [227, 147, 147], tolerance: 3))
    }

    @Test func sixteenBitGreyPNGBecomesEightBitGrey() throws {
        let image = try VipsImage(pixels16: [UInt16](repeating: 32896, count: 64), width: 8, height: 8, bands: 1).labelled(as: .grey16)
        let data = try image.encoded(suffix: ".png[bitdepth=16]")
        let decoded = try decode(data)
        #expect(decoded.image.bandFormat == .uchar)
        #expect(decoded.image.bands == 1)
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 4, y: 4), [128], tolerance: 1))
    }

    @Test(arguments: [4, 2, 5])
    func sixteenBitAlphaThroughAProfileKeepsItsTransparency(bands: Int) throws {
        // Given 16-bit colour (or grey) with alpha 0, 16384, 32768 and 65535 in four columns,
        // carrying an Adobe RGB (or grey) profile; with five bands, a spot channel after the alpha
        let colourBands = bands == 2 ? 1 : 3
        let profile =
            bands == 2
            ? ICCFixtures.greyProfile(curve: ICCFixtures.gammaCurve(1.8))
            : ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        let alphas: [UInt16] = [0, 16384, 32768, 65535]
        var pixels: [UInt16] = []
        for _ in 0..<4 {
            for x in 0..<16 {
                pixels += [UInt16](repeating: 30000, count: colourBands) + [alphas[x / 4]] + (bands == 5 ? [9000] : [])
            }
        }
        let image = try VipsImage(pixels16: pixels, width: 16, height: 4, bands: bands).labelled(as: bands == 2 ? .grey16 : .rgb16)
        let data = try image.settingBlobField("icc-profile-data", to: profile).encoded(suffix: ".tif")
        #expect(try VipsImage.open(data: data).hasICCProfile)
        // When decoded
        let decoded = try decode(data, name: "soft.tif")
        // Then the alpha is scaled to 8 bits, not clipped to opaque
        #expect(try (0..<4).map { try decoded.image.pixel(x: $0 * 4 + 1, y: 1).last } == [0, 64, 128, 255])
    }

    @Test func floatingPointColourWithAProfileKeepsItsColour() throws {
        // Given a floating-point TIFF (which libvips takes as linear light) with an Adobe RGB profile
        let colour = try Fixtures.solid(width: 8, height: 8, colour: [150, 80, 190])
            .applying("linear", ["a": .numbers([1.0 / 255]), "b": .numbers([0])])
        let profile = ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        let data = try colour.settingBlobField("icc-profile-data", to: profile).encoded(suffix: ".tif")
        #expect(try VipsImage.open(data: data).bandFormat == .float)
        // When decoded, then it has colour, where libvips' profile conversion made it black
        let pixel = try decode(data, name: "float.tif").image.pixel(x: 4, y: 4)
        #expect(pixel.prefix(3).reduce(0, +) > 100, "\(pixel)")
    }

    @Test func anAVIFsMetadataOutlivesItsLoader() throws {
        // Given a valid AVIF with EXIF (libvips writes some), decoded: the loader's images are
        // gone once `decode` returns. libvips 8.14's HEIF loader left the decoded image's EXIF
        // pointing into their freed memory (AddressSanitizer: heap-use-after-free on save).
        let data = try Fixtures.gradient(width: 40, height: 30).encoded(suffix: ".avif[Q=50,effort=0]")
        #expect(try VipsImage.open(data: data).hasField("exif-data"))
        let decoded = try decode(data)
        // When it is saved several times, as fan-out does
        for _ in 0..<3 {
            let jpeg = try decoded.image.encoded(suffix: ".jpg")
            // Then each output carries the EXIF, read from memory the image owns
            #expect(try VipsImage.open(data: jpeg).hasField("exif-data"))
        }
    }

    @Test(arguments: ["jpg", "webp"])
    func anOutputOfARotatedInputKeepsItsEXIFButNoLongerAsksToBeRotated(format: String) async throws {
        // Given a photo stored sideways with orientation 6 and its EXIF
        let directory = try TemporaryDirectory()
        let stored = try Fixtures.redCorner(width: 64, height: 32).withOrientation(6)
        try directory.write(try stored.encoded(suffix: ".\(format)"), to: "in/sideways.\(format)")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "encode": {"format": "jpeg", "keep": "all"}, "path": "out/{stem}.jpg"}"#
            ])
        // When it is made upright and written keeping all its metadata
        _ = try await PipelineHarness.run(json, in: directory)
        // Then the output is upright, keeps EXIF, and says orientation 1: a viewer must not turn it again
        let output = try VipsImage.open(file: directory.path + "/out/sideways.jpg")
        #expect(output.size == ImageSize(width: 32, height: 64))
        #expect(output.hasField("exif-data"))
        #expect(output.orientation == 1)
    }

    @Test func aJPEGFewerPixelsHighThanItsShrinkOnLoadIsMadeBesideTheOthers() async throws {
        // Given banners 1, 3 and 7 pixels high (and one as wide) beside a photo, and an output
        // that fits each inside 200×200, which allows a shrink on load of 8: libvips aborts the
        // process on a JPEG shrunk past its shorter side
        let directory = try TemporaryDirectory()
        for (name, width, height) in [("a", 1600, 1), ("b", 1600, 3), ("c", 1600, 7), ("d", 7, 1600), ("photo", 1600, 900)] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height)), to: "in/\(name).jpg")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 200, "height": 200, "fit": "inside"}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
            ])
        // When they run
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        // Then every one is made, at its size
        #expect(summary.succeeded == 5 && summary.failed == 0)
        let sizes = try ["a", "b", "c", "d", "photo"].map { name in
            try VipsImage.open(file: directory.path + "/out/\(name).webp").size
        }
        #expect(
            sizes == [
                ImageSize(width: 200, height: 1), ImageSize(width: 200, height: 1), ImageSize(width: 200, height: 1),
                ImageSize(width: 1, height: 200), ImageSize(width: 200, height: 113),
            ])
    }
}
