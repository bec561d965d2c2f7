import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Outputs that keep a window of a very wide or tall image (a cover crop) decode that window
/// alone, in a pass of their own, and get what decoding the whole image once would give them.
@Suite struct DecodeWindowTests {
    static let settings = DecompressSettings(concurrency: 1, maxPixels: 100_000_000, autorotate: true, failOn: .truncated)

    /// A panorama whose bands change smoothly, each its own way (across, down, diagonally): a
    /// window taken from the wrong place, or scaled wrong, shows as levels off.
    static func panorama(width: Int, height: Int) throws -> VipsImage {
        try Fixtures.panorama(width: width, height: height)
    }

    /// Two cover crops (centre and south-east) and a fit inside 300×300, as a pipeline file has them.
    static func outputs() throws -> [OutputDefinition] {
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "centre", "steps": [{"resize": {"width": 64, "height": 64, "fit": "cover"}}], "encode": {"format": "png"}, "path": "out/{stem}-c.png"}"#,
                #"{"name": "corner", "steps": [{"resize": {"width": 48, "height": 48, "fit": "cover", "position": "southeast"}}], "encode": {"format": "png"}, "path": "out/{stem}-e.png"}"#,
                #"{"name": "fit", "steps": [{"resize": {"width": 300, "height": 300, "fit": "inside"}}], "encode": {"format": "png"}, "path": "out/{stem}-f.png"}"#,
            ])
        return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard).outputs
    }

    /// Output `index` made by its steps from `decoded`, as the process stage makes it.
    static func made(_ index: Int, from decoded: DecodedImage, outputs: [OutputDefinition]) throws -> VipsImage {
        let context = ProcessingContext(input: "in", output: outputs[index].name, originalSize: decoded.originalSize)
        return try StepChain(outputs[index]).apply(to: decoded, outputIndex: index, context: context).image
    }

    /// How far apart two images of one size are: the mean and the largest difference of a band value.
    static func difference(_ a: VipsImage, _ b: VipsImage) throws -> (mean: Double, largest: Int) {
        try Fixtures.difference(a, b)
    }

    /// Every output made from `whole` and from `split` is the same size and the same within
    /// resampling: a mean under one level, no value more than 6 apart.
    static func expectSameWithinResampling(
        _ whole: DecodedImage, _ split: DecodedImage, outputs: [OutputDefinition],
        _ label: String = ""
    ) throws {
        for index in outputs.indices {
            let (a, b) = (try made(index, from: whole, outputs: outputs), try made(index, from: split, outputs: outputs))
            #expect(a.size == b.size, "\(label) \(outputs[index].name)")
            let (mean, largest) = try difference(a, b)
            #expect(mean < 1 && largest <= 6, "\(label) \(outputs[index].name): mean \(mean), largest \(largest)")
        }
    }

    enum Reader: String, CaseIterable, Sendable {
        case pngWhole, pngRowsAhead, pngLibvips, jpeg, tiffStripsAhead
    }

    @Test(arguments: Reader.allCases)
    func coverOutputsDecodeTheirWindowAloneAndGetWhatTheWholeImageGives(reader: Reader) throws {
        // Given a 6000×500 panorama (9 MB of pixels: large enough for the row and strip readers)
        let image = try Self.panorama(width: 6000, height: 500)
        let data: Data =
            switch reader {
            case .pngWhole, .pngRowsAhead, .pngLibvips: try Fixtures.png(image)
            case .jpeg: try Fixtures.jpeg(image, quality: 95)
            case .tiffStripsAhead: try image.encoded(suffix: ".tif[compression=lzw]")
            }
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: "input")
        let source = EncodedSource.file(path: path, byteCount: Int64(data.count))
        let outputs = try Self.outputs()
        var settings = Self.settings
        if reader == .pngLibvips { settings.failOn = .none }  // the row readers take only stricter settings
        Vips.setThreadsPerImage(1)  // as a run sets it
        let roomy = reader == .pngWhole ? MemoryAdmission(capacity: 1 << 30) : MemoryAdmission(capacity: 0)

        // When it is decoded once for every output, and with windows allowed at any size
        var once = ImageDecoder(settings: settings, outputs: outputs, wholePNGAllowance: roomy)
        once.windowedDecodeMinimum = .max
        var windowed = once
        windowed.windowedDecodeMinimum = 0
        let plan = windowed.decodePlan(for: ImageSize(width: 6000, height: 500), loader: "pngload")
        let whole = try once.decode(source)
        let split = try windowed.decode(source)

        // Then the two cover outputs decode their windows, the fit output alone sizes the whole image
        #expect(plan.windows.keys.sorted() == [0, 1])
        #expect(plan.decodesWhole)
        #expect(whole.windows.isEmpty && whole.image.size == ImageSize(width: 768, height: 64))
        #expect(split.windows.keys.sorted() == [0, 1])
        #expect(split.image.size == ImageSize(width: 300, height: 25))
        #expect(split.windows[0]?.size == ImageSize(width: 64, height: 64))
        #expect(split.windows[1]?.size == ImageSize(width: 48, height: 48))
        // and every output is what the whole image gives, within resampling (measured: mean 0.1 to
        // 0.75, at most 4 levels apart; a window 100 pixels off is 4 levels off in two bands)
        try Self.expectSameWithinResampling(whole, split, outputs: outputs)
    }

    @Test func onlyImagesTooWideToDecodeOnceAreWindowed() throws {
        // Given the outputs and the default threshold (150 MB decoded once)
        let decoder = ImageDecoder(settings: Self.settings, outputs: try Self.outputs())
        #expect(decoder.windowedDecodeMinimum == MemoryAccountant.windowedDecodeFrom)

        // Then a photograph is decoded once, and so is a panorama whose rows libvips keeps in little memory
        #expect(decoder.decodePlan(for: ImageSize(width: 6000, height: 4000), loader: "jpegload").windows.isEmpty)
        #expect(decoder.decodePlan(for: ImageSize(width: 20000, height: 2000), loader: "pngload").windows.isEmpty)
        // but 300000×500, decoded at 38400×64 for the 64×64 crop from rows 100000 wide, is windowed
        let size = ImageSize(width: 300_000, height: 500)
        let wide = decoder.decodePlan(for: size, loader: "pngload")
        #expect(wide.windows.keys.sorted() == [0, 1])
        #expect(wide.windows[0] == DecodeWindow(left: 149_750, top: 0, width: 500, height: 500, size: ImageSize(width: 64, height: 64)))
        #expect(wide.decodeSize == ImageSize(width: 300, height: 1))
        var once = decoder
        once.windowedDecodeMinimum = .max
        #expect(wide.estimate * 100 < once.decodePlan(for: size, loader: "pngload").estimate)
        #expect(wide.passes == 3)
        // not for WebP, SVG or PDF (their loaders make the whole frame at the scale asked
        // for), nor for a decode that cannot stream (an interlaced PNG: each pass would hold
        // the full image)
        for loader in ["webpload", "svgload", "pdfload"] {
            #expect(decoder.decodePlan(for: size, loader: loader).windows.isEmpty, "\(loader)")
        }
        #expect(decoder.decodePlan(for: size, loader: "pngload", streams: false).windows.isEmpty)
    }

    @Test func whenEveryOutputHasAWindowNoWholeImageIsDecoded() throws {
        // Given only cover outputs, and a JPEG stored upright
        let outputs = Array(try Self.outputs().prefix(2))
        let data = try Fixtures.jpeg(try Self.panorama(width: 3000, height: 200))
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: "input.jpg")
        var decoder = ImageDecoder(settings: Self.settings, outputs: outputs)
        decoder.windowedDecodeMinimum = 0

        // When it is decoded
        let decoded = try decoder.decode(.file(path: path, byteCount: Int64(data.count)))

        // Then each output has its window and the image the outputs would fan out from is the first window
        #expect(!decoder.decodePlan(for: ImageSize(width: 3000, height: 200), loader: "jpegload").decodesWhole)
        #expect(decoded.windows.keys.sorted() == [0, 1])
        #expect(decoded.image.size == ImageSize(width: 64, height: 64))
        #expect(try Self.made(1, from: decoded, outputs: outputs).size == ImageSize(width: 48, height: 48))
    }

    @Test func outputsUpToDateGetNoPassButTheOthersAreDecodedAsInAFullRun() throws {
        // Given the three outputs and windows allowed at any size
        let data = try Fixtures.png(try Self.panorama(width: 3000, height: 200))
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: "input.png")
        let source = EncodedSource.file(path: path, byteCount: Int64(data.count))
        let outputs = try Self.outputs()
        var decoder = ImageDecoder(settings: Self.settings, outputs: outputs)
        decoder.windowedDecodeMinimum = 0
        let all = try decoder.decode(source)

        // When only the fit output is to be made, and then only the centre crop
        let fitOnly = try decoder.decode(source, only: [2])
        let centreOnly = try decoder.decode(source, only: [0])

        // Then no window is decoded for outputs not made, nor the whole image when none needs it
        #expect(fitOnly.windows.isEmpty)
        #expect(centreOnly.windows.keys.sorted() == [0] && centreOnly.image.size == ImageSize(width: 64, height: 64))
        // and what is made is what the full run makes, byte for byte
        #expect(try Self.made(2, from: fitOnly, outputs: outputs).bytes() == Self.made(2, from: all, outputs: outputs).bytes())
        #expect(try Self.made(0, from: centreOnly, outputs: outputs).bytes() == Self.made(0, from: all, outputs: outputs).bytes())
    }

    @Test(arguments: 1...8)
    func aFileStoredTurnedDecodesItsWindowWhereItLiesAsStored(orientation: Int) throws {
        // Given a JPEG stored turned or mirrored (EXIF orientation), a 3000×200 panorama upright
        let swapped = orientation >= 5
        let stored = try Self.panorama(width: swapped ? 200 : 3000, height: swapped ? 3000 : 200).withOrientation(orientation)
        let data = try Fixtures.jpeg(stored, quality: 95)
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: "input.jpg")
        let source = EncodedSource.file(path: path, byteCount: Int64(data.count))
        let outputs = try Self.outputs()
        var once = ImageDecoder(settings: Self.settings, outputs: outputs)
        once.windowedDecodeMinimum = .max
        var windowed = once
        windowed.windowedDecodeMinimum = 0

        // When it is decoded once, and with the cover crops' windows decoded alone
        let whole = try once.decode(source)
        let split = try windowed.decode(source)

        // Then both are upright, and every output is the same within resampling
        #expect(whole.originalSize == ImageSize(width: 3000, height: 200))
        #expect(split.windows.keys.sorted() == [0, 1])
        try Self.expectSameWithinResampling(whole, split, outputs: outputs, "orientation \(orientation)")
    }

    @Test func aWindowTurnsWithTheStoredPixels() {
        // Given a 300×100 upright image and the window 10...59 × 20...39 of it
        let window = DecodeWindow(left: 10, top: 20, width: 50, height: 20, size: ImageSize(width: 25, height: 10))
        let upright = ImageSize(width: 300, height: 100)

        // Then stored turned, the window lies where the turn puts it, its size turned with it
        #expect(window.stored(in: upright, orientation: 1) == window)
        #expect(window.stored(in: upright, orientation: 2) == DecodeWindow(left: 240, top: 20, width: 50, height: 20, size: window.size))
        #expect(window.stored(in: upright, orientation: 3) == DecodeWindow(left: 240, top: 60, width: 50, height: 20, size: window.size))
        #expect(window.stored(in: upright, orientation: 4) == DecodeWindow(left: 10, top: 60, width: 50, height: 20, size: window.size))
        let turned = ImageSize(width: 10, height: 25)
        #expect(window.stored(in: upright, orientation: 5) == DecodeWindow(left: 20, top: 10, width: 20, height: 50, size: turned))
        #expect(window.stored(in: upright, orientation: 6) == DecodeWindow(left: 20, top: 240, width: 20, height: 50, size: turned))
        #expect(window.stored(in: upright, orientation: 7) == DecodeWindow(left: 60, top: 240, width: 20, height: 50, size: turned))
        #expect(window.stored(in: upright, orientation: 8) == DecodeWindow(left: 60, top: 10, width: 20, height: 50, size: turned))
    }
}
