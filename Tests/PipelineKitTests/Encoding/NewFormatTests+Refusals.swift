import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Encoder settings a file may not give: each refused when the file is loaded, naming its path.
extension NewFormatTests {
    @Test(arguments: [
        (#"{"format": "jpeg", "strip": true, "keep": ["icc"]}"#, "encode.keep", "not both"),
        (#"{"format": "jxl", "quality": 80, "distance": 1.0}"#, "encode.distance", "not both"),
        (#"{"format": "png", "keep": ["gps"]}"#, "encode.keep", ""),
        (#"{"format": "png", "keep": "some"}"#, "encode.keep", ""),
        (#"{"format": "tiff", "compression": "lzma"}"#, "encode.compression", ""),
        (#"{"format": "tiff", "tile": true, "tileSize": 100}"#, "encode.tileSize", "multiple of 16"),
        (#"{"format": "tiff", "tileSize": 64}"#, "encode.tileSize", "tile"),
        // An option that could do nothing
        (#"{"format": "tiff", "quality": 60}"#, "encode.quality", #"compression "none" has none"#),
        (#"{"format": "tiff", "compression": "lzw", "quality": 60}"#, "encode.quality", #"compression "lzw" has none"#),
        (#"{"format": "png", "palette": false, "effort": 3}"#, "encode.effort", "palette: false"),
        (#"{"format": "jxl", "lossless": true, "distance": 2.0}"#, "encode.distance", "a lossless encode has no distance"),
        (#"{"format": "avif", "lossless": true, "quality": 60}"#, "encode.quality", "a lossless encode has no quality"),
        (#"{"format": "avif", "lossless": true, "quality": {"ssimulacra2": 80}}"#, "encode.quality", "drop lossless or the quality"),
        (#"{"format": "webp", "lossless": true, "quality": {"ssimulacra2": 80}}"#, "encode.quality", "or give a fixed quality"),
        (#"{"format": "heic", "lossless": true, "chromaSubsampling": "4:2:0"}"#, "encode.chromaSubsampling", "keeps colour whole"),
        (##"{"format": "jpeg", "background": "#ff000080"}"##, "encode.background", "must be opaque"),
        (#"{"format": "jpeg", "background": "transparent"}"#, "encode.background", "must be opaque"),
        (#"{"format": "gif", "bitdepth": 9}"#, "encode.bitdepth", ""),
        (
            #"{"format": "gif", "quality": 50}"#, "encode.quality",
            #"unknown key "quality"; format "gif" has no such key ("jpeg", "png""#
        ),
        (#"{"format": "heic", "effort": 10}"#, "encode.effort", ""),
        (#"{"format": "webp", "iccProfile": "cmyk"}"#, "encode.iccProfile", "jpeg or tiff"),
        (#"{"format": "gif", "iccProfile": "p3"}"#, "encode.iccProfile", "gif has no place for a colour profile"),
        (#"{"format": "jpeg", "iccProfile": "missing.icc"}"#, "encode.iccProfile", "missing.icc"),
    ])
    func badEncoderSettingsAreRefusedNamingThePath(encode: String, path: String, words: String) throws {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(inputs: ["in/*"], outputs: [#"{"name": "o", "encode": \#(encode), "path": "out/{stem}.{format}"}"#])
        do {
            _ = try PipelineHarness.pipeline(json, in: directory)
            Issue.record("accepted \(encode)")
        } catch let error as PipelineFileError {
            let text = "\(error)"
            #expect(text.contains("outputs[0].\(path)"), "\(text)")
            #expect(words.isEmpty || text.contains(words), "\(text)")
        }
    }

    @Test func anICCProfileFileIsCheckedToBeOneWhenTheFileIsLoaded() throws {
        // Given a JPEG named as a profile beside a real profile
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "photo.icc")
        try directory.write(
            Data(ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))), to: "adobe.icc")
        func json(_ profile: String) -> String {
            PipelineHarness.json(
                inputs: ["in/*"],
                outputs: [#"{"name": "o", "encode": {"format": "jpeg", "iccProfile": "\#(profile)"}, "path": "out/{stem}.jpg"}"#])
        }

        // Then the real one is taken, and the JPEG refused when the file is loaded, naming the key and the file
        _ = try PipelineHarness.pipeline(json("adobe.icc"), in: directory)
        #expect {
            _ = try PipelineHarness.pipeline(json("photo.icc"), in: directory)
        } throws: { error in
            let text = "\(error)"
            return text.contains("outputs[0].encode.iccProfile") && text.contains("photo.icc is not an ICC profile")
        }
    }

    /// Converted to a grey profile the pixels are one band, which WebP, AVIF and HEIC write as
    /// colour, tagged with the grey profile: a browser showed such an AVIF as broken.
    @Test func aGreyProfileIsRefusedForAFormatThatWritesColourOnly() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data(ICCFixtures.greyProfile(curve: ICCFixtures.gammaCurve(1.8))), to: "grey.icc")
        func json(_ format: String) -> String {
            PipelineHarness.json(
                inputs: ["in/*"],
                outputs: [#"{"name": "o", "encode": {"format": "\#(format)", "iccProfile": "grey.icc"}, "path": "out/{stem}.x"}"#])
        }
        for format in ["webp", "avif", "heic"] {
            #expect {
                _ = try PipelineHarness.pipeline(json(format), in: directory)
            } throws: { error in
                "\(error)".contains("outputs[0].encode.iccProfile")
                    && "\(error)".contains("grey.icc is a greyscale profile, which needs a format that holds grey: jpeg, png, tiff or jxl")
            }
        }
        // while the formats that hold grey take it
        for format in ["jpeg", "png", "tiff", "jxl"] { _ = try PipelineHarness.pipeline(json(format), in: directory) }
    }

    @Test func aProfileNoImageCanBeConvertedToIsRefusedWhenTheFileIsLoaded() throws {
        // Given an abstract profile, and a display profile cut short
        let directory = try TemporaryDirectory()
        var abstract = ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        abstract.replaceSubrange(12..<16, with: Array("abst".utf8))
        try directory.write(Data(abstract), to: "abstract.icc")
        let whole = ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        try directory.write(Data(whole.prefix(whole.count - 20)), to: "cut.icc")
        // and a colour space profile whose data is Lab, which Little CMS cannot convert sRGB to
        var lab = whole
        lab.replaceSubrange(12..<20, with: Array("spacLab ".utf8))
        try directory.write(Data(lab), to: "lab.icc")
        for (file, words) in [
            ("abstract.icc", #"a profile of class "abst""#), ("cut.icc", "is cut short"),
            ("lab.icc", "a profile no image can be converted to"),
        ] {
            let json = PipelineHarness.json(
                inputs: ["in/*"],
                outputs: [#"{"name": "o", "encode": {"format": "jpeg", "iccProfile": "\#(file)"}, "path": "out/{stem}.jpg"}"#])
            // Then each is refused when the file is loaded, naming the key and why
            #expect {
                _ = try PipelineHarness.pipeline(json, in: directory)
            } throws: { error in
                "\(error)".contains("outputs[0].encode.iccProfile") && "\(error)".contains(words)
            }
        }
        // and a TIFF of WebP compression is refused a CMYK profile, whose black plate it would take for alpha
        let webp = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "o", "encode": {"format": "tiff", "compression": "webp", "iccProfile": "cmyk"}, "path": "out/{stem}.tif"}"#
            ])
        #expect {
            _ = try PipelineHarness.pipeline(webp, in: directory)
        } throws: { error in
            "\(error)".contains("outputs[0].encode.compression") && "\(error)".contains("a CMYK iccProfile needs deflate")
        }
    }

    @Test func aCMYKProfileFileIsRefusedForAFormatWithoutCMYK() throws {
        // Given libvips' CMYK profile as a file
        let directory = try TemporaryDirectory()
        let inks = try Fixtures.solid(width: 8, height: 8).convertedToProfile("cmyk")
        try directory.write(Data(try #require(inks.blobCopy("icc-profile-data"))), to: "press.icc")
        func json(_ format: String) -> String {
            PipelineHarness.json(
                inputs: ["in/*"],
                outputs: [#"{"name": "o", "encode": {"format": "\#(format)", "iccProfile": "press.icc"}, "path": "out/{stem}.\#(format)"}"#]
            )
        }
        // Then a JPEG may embed it, and a PNG may not, as it may not embed "cmyk"
        _ = try PipelineHarness.pipeline(json("jpeg"), in: directory)
        #expect {
            _ = try PipelineHarness.pipeline(json("png"), in: directory)
        } throws: { error in
            let text = "\(error)"
            return text.contains("outputs[0].encode.iccProfile") && text.contains("press.icc is a CMYK profile")
                && text.contains("jpeg or tiff")
        }
    }

    /// libtiff's WebP codec takes colour alone, its JPEG codec no alpha, and a float predictor
    /// floating-point samples: each gets an image it takes, or the output fails saying why.
    @Test func aTIFFCompressionGetsAnImageItsCodecTakes() throws {
        var webp = EncoderSettings(format: .tiff, strip: true)
        webp.tiffCompression = .webp
        let grey = try Fixtures.solid(width: 64, height: 48, colour: [90])
        let fromGrey = try VipsImage.open(data: ImageEncoder.savedBytes(ImageEncoder.prepare(grey, for: webp).image, with: webp))
        #expect(abs(try fromGrey.pixel(x: 10, y: 10)[0] - 90) <= 3)
        var jpeg = EncoderSettings(format: .tiff, strip: true)
        jpeg.tiffCompression = .jpeg
        let translucent = try Fixtures.solid(width: 64, height: 48, colour: [127, 127, 127, 128])
        let flat = try VipsImage.open(data: ImageEncoder.savedBytes(ImageEncoder.prepare(translucent, for: jpeg).image, with: jpeg))
        // Half of a grey over the white background, as the JPEG encoder flattens it
        let pixel = try flat.pixel(x: 10, y: 10)
        #expect(flat.bands == 3 && abs(pixel[0] - 191) <= 4, "\(pixel)")
        var float = EncoderSettings(format: .tiff, strip: true)
        float.tiffCompression = .deflate
        float.predictor = .float
        #expect(throws: VipsError.self) { try ImageEncoder.prepare(grey, for: float) }
    }

    @Test func aProfileChangedSinceTheFileLoadedFailsItsOutputsNamingIt() async throws {
        // Given a pipeline file loaded with a whole profile
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        try directory.write(
            Data(ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))), to: "brand.icc")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "o", "encode": {"format": "jpeg", "iccProfile": "brand.icc"}, "path": "out/{stem}.jpg"}"#])
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        // When the profile is then not one, or a FIFO with no writer, as the run encodes
        for replace in [
            { try directory.write(Data("not a profile at all, but long enough to be read as one".utf8), to: "brand.icc") },
            {
                try FileManager.default.removeItem(atPath: directory.path + "/brand.icc")
                #expect(mkfifo(directory.path + "/brand.icc", 0o600) == 0)
            },
        ] as [() throws -> Void] {
            try replace()
            let result = try await pipeline.run(force: true).collect()
            // Then the output fails, naming the key and the file, and the run ends
            let failure = try #require(result.reports.first?.failures.first?.error)
            #expect(failure.stage == .encode, "\(failure)")
            #expect(failure.reason.hasPrefix("encode.iccProfile \(directory.path)/brand.icc"), "\(failure)")
        }
        // A FIFO is named, from the check before libvips is given the profile
        let last = try await pipeline.run(force: true).collect()
        let reason = try #require(last.reports.first?.failures.first?.error.reason)
        #expect(reason.contains("encode.iccProfile \(directory.path)/brand.icc: it is a FIFO"), "\(reason)")
    }
}
