import PipelineKit
import TestSupport
import Testing
import Vips
import VipsFilters

@Suite("Filters")
struct FiltersTests {

    private func sharpen(_ values: [String: any Sendable]) throws -> Sharpen {
        try Fixtures.processor(Sharpen.self, values)
    }

    private func median(_ values: [String: any Sendable]) throws -> Median {
        try Fixtures.processor(Median.self, values)
    }

    /// A 40×10 grey image, 100 on the left half and 150 on the right, in `bands` bands (3: RGB).
    private func softEdge(bands: Int = 3) throws -> VipsImage {
        try Fixtures.image(width: 40, height: 10, bands: bands) { x, _ in
            Array(repeating: x < 20 ? 100 : 150, count: bands)
        }
    }

    // MARK: Sharpen

    @Test(arguments: [[:], ["sigma": 1], ["sigma": 2, "m1": 0, "m2": 3]] as [[String: any Sendable]])
    func sharpenRaisesContrastAtAnEdgeAndKeepsFlatAreasFlat(_ options: [String: any Sendable]) throws {
        // Given an RGB image with a soft grey step from 100 to 150
        let image = try softEdge()

        // When it is sharpened
        let sharpen = try sharpen(options)
        let result = try sharpen.applied(to: image)

        // Then size, bands and format are kept
        #expect(result.size == image.size)
        #expect(sharpen.outputSize(for: image.size) == result.size)
        #expect(result.bands == 3)
        #expect(result.bandFormat == .uchar)
        #expect(result.interpretation == image.interpretation)
        // and the step across the edge is steeper: darker on the dark side, lighter on the light
        let dark = try result.pixel(x: 19, y: 5)
        let light = try result.pixel(x: 20, y: 5)
        #expect(light[0] - dark[0] > 55, "\(options): \(dark) | \(light)")
        #expect(dark[0] < 100 && light[0] > 150, "\(options): \(dark) | \(light)")
        // and still grey
        #expect(Set(dark).count == 1 && Set(light).count == 1, "\(options): \(dark) | \(light)")
        // while the flat areas far from the edge are unchanged
        #expect(Fixtures.isClose(try result.pixel(x: 2, y: 5), [100, 100, 100], tolerance: 1))
        #expect(Fixtures.isClose(try result.pixel(x: 37, y: 5), [150, 150, 150], tolerance: 1))
    }

    @Test(arguments: [[:], ["sigma": 1]] as [[String: any Sendable]])
    func sharpenLeavesAlphaUntouched(_ options: [String: any Sendable]) throws {
        // Given a grey step whose alpha has a step of its own
        let image = try Fixtures.image(width: 40, height: 10, bands: 4) { x, _ in
            let grey: UInt8 = x < 20 ? 100 : 150
            return [grey, grey, grey, x < 10 ? 255 : 128]
        }

        // When it is sharpened
        let result = try sharpen(options).applied(to: image)

        // Then alpha is as it was, and the colour edge is sharpened
        #expect(result.bands == 4)
        #expect(result.bandFormat == .uchar)
        for x in [8, 9, 10, 11, 19, 20] {
            #expect(try result.pixel(x: x, y: 5)[3] == (x < 10 ? 255 : 128), "column \(x)")
        }
        #expect(try result.pixel(x: 20, y: 5)[0] - result.pixel(x: 19, y: 5)[0] > 55)
    }

    @Test(arguments: [[:], ["sigma": 1]] as [[String: any Sendable]])
    func sharpenDoesNotShowTheColourUnderTransparentPixels(_ options: [String: any Sendable]) throws {
        // Given two images that look alike: grey on the right, transparent black or white on the left
        func image(hidden: UInt8) throws -> VipsImage {
            try Fixtures.image(width: 40, height: 10, bands: 4) { x, _ in x < 20 ? [hidden, hidden, hidden, 0] : [128, 128, 128, 255] }
        }
        // When each is sharpened
        let sharpen = try sharpen(options)
        let overBlack = try sharpen.applied(to: image(hidden: 0))
        let overWhite = try sharpen.applied(to: image(hidden: 255))
        // Then what shows is alike too
        for x in 20..<24 {
            #expect(try overBlack.pixel(x: x, y: 5) == overWhite.pixel(x: x, y: 5), "column \(x)")
        }
    }

    @Test(arguments: [[:], ["sigma": 1]] as [[String: any Sendable]])
    func sharpenKeepsGreyscaleAndSixteenBitImagesAsTheyAre(_ options: [String: any Sendable]) throws {
        // Given a greyscale image and a 16-bit RGB one, each with a soft step
        let grey = try softEdge(bands: 1)
        let pixels16 = (0..<10).flatMap { _ in (0..<40).flatMap { x in Array(repeating: UInt16(x < 20 ? 25_000 : 40_000), count: 3) } }
        let deep = try VipsImage(pixels16: pixels16, width: 40, height: 10, bands: 3).labelled(as: .rgb16)

        // When they are sharpened
        let sharpen = try sharpen(options)
        let greyResult = try sharpen.applied(to: grey)
        let deepResult = try sharpen.applied(to: deep)

        // Then each keeps its bands, format and interpretation, and its edge is steeper
        #expect(greyResult.bands == 1 && greyResult.bandFormat == .uchar && greyResult.interpretation == .blackAndWhite)
        #expect(try greyResult.pixel(x: 20, y: 5)[0] - greyResult.pixel(x: 19, y: 5)[0] > 55)
        #expect(deepResult.bands == 3 && deepResult.bandFormat == .ushort && deepResult.interpretation == .rgb16)
        #expect(try deepResult.pixel(x: 20, y: 5)[0] - deepResult.pixel(x: 19, y: 5)[0] > 15_000)
        #expect(Fixtures.isClose(try deepResult.pixel(x: 2, y: 5), [25_000, 25_000, 25_000], tolerance: 300))
    }

    @Test func sharpenSettingsWithoutSigmaAreAnOptionErrorNamingSigma() {
        let error = #expect(throws: OptionError.self) { try sharpen(["m2": 3]) }
        #expect(error?.option == "sigma")
        #expect(error?.message.contains("m2") == true)
        let tooLarge = #expect(throws: OptionError.self) { try Sharpen(sigma: 11) }
        #expect(tooLarge?.option == "sigma")
        let negative = #expect(throws: OptionError.self) { try Sharpen(sigma: 1, y3: -1) }
        #expect(negative?.option == "y3")
    }

    @Test func sharpenIdentifiersDifferWhenSettingsDiffer() throws {
        let identifiers = try [Sharpen(), Sharpen(sigma: 1), Sharpen(sigma: 2), Sharpen(sigma: 1, m1: 0)].map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
        #expect(try sharpen([:]).identifier == Sharpen().identifier)
        #expect(try sharpen(["sigma": 1]).identifier == Sharpen(sigma: 1).identifier)
    }

    // MARK: Median

    @Test func medianRemovesASingleSpeckFromAFlatArea() throws {
        // Given flat grey with one white and one black speck
        let image = try Fixtures.image(width: 11, height: 11, bands: 3) { x, y in
            switch (x, y) {
            case (5, 5): [255, 255, 255]
            case (0, 0): [0, 0, 0]
            default: Fixtures.grey
            }
        }

        // When the median of 3×3 is taken
        let median = try median([:])
        let result = try median.applied(to: image)

        // Then both specks are gone and the size is kept
        #expect(result.size == image.size)
        #expect(median.outputSize(for: image.size) == result.size)
        #expect(try result.pixel(x: 5, y: 5) == [128, 128, 128])
        #expect(try result.pixel(x: 0, y: 0) == [128, 128, 128])
    }

    @Test func medianKeepsAStraightEdgeSharp() throws {
        // Given black on the left half and white on the right
        let image = try Fixtures.image(width: 20, height: 10, bands: 1) { x, _ in [x < 10 ? 0 : 255] }

        // When the median of 5×5 is taken
        let result = try median(["size": 5]).applied(to: image)

        // Then the edge is exactly where it was
        #expect(try result.pixel(x: 9, y: 5) == [0])
        #expect(try result.pixel(x: 10, y: 5) == [255])
    }

    @Test func medianRemovesASpeckInAlphaToo() throws {
        // Given opaque red with one transparent pixel
        let image = try Fixtures.image(width: 9, height: 9, bands: 4) { x, y in
            (x, y) == (4, 4) ? [0, 0, 0, 0] : [255, 0, 0, 255]
        }

        // When the median is taken
        let result = try median([:]).applied(to: image)

        // Then the pixel is opaque red like its neighbours
        #expect(result.bands == 4)
        #expect(try result.pixel(x: 4, y: 4) == [255, 0, 0, 255])
    }

    @Test func aMedianWiderThanTheImageTakesThePixelsPastItsEdgesAsCopies() throws {
        // Given a 3×2 grey image with one white speck, and a 1×1 one: smaller than the window
        let specked = try Fixtures.image(width: 3, height: 2, bands: 1) { x, y in [(x, y) == (1, 0) ? 255 : 128] }
        let single = try Fixtures.image(width: 1, height: 1, bands: 1) { _, _ in [40] }

        // When the median of 5×5 is taken
        let median = try median(["size": 5])
        let cleaned = try median.applied(to: specked)

        // Then each keeps its size; the speck is gone, as in a large image, and a lone pixel stays
        #expect(cleaned.size == specked.size)
        for y in 0..<2 {
            for x in 0..<3 { #expect(try cleaned.pixel(x: x, y: y) == [128], "(\(x), \(y))") }
        }
        let kept = try median.applied(to: single)
        #expect(kept.size == single.size)
        #expect(try kept.pixel(x: 0, y: 0) == [40])
    }

    /// libvips 8.14's 8-bit path for windows of more than ten pixels gives other values than the
    /// median (libvips#4609); each window here is sorted to check every pixel.
    @Test(arguments: [3, 5, 9, 15])
    func medianIsTheMiddleValueOfEachWindow(size: Int) throws {
        // Given noise in one band, where every window's middle value differs
        let noise = try Fixtures.noise(width: 40, height: 32).extractingBands(0)
        let values = try noise.bytes()

        // When the median of size×size is taken
        let result = try median(["size": size]).applied(to: noise)

        // Then each pixel away from the edges is its window's middle value
        #expect(result.bandFormat == .uchar)
        let medians = try result.bytes()
        let margin = size / 2
        var wrong = 0
        for y in margin..<(noise.height - margin) {
            for x in margin..<(noise.width - margin) {
                var window: [UInt8] = []
                for v in (y - margin)...(y + margin) {
                    for u in (x - margin)...(x + margin) { window.append(values[v * noise.width + u]) }
                }
                if medians[y * noise.width + x] != window.sorted()[window.count / 2] { wrong += 1 }
            }
        }
        #expect(wrong == 0, "\(wrong) pixels are not their window's median")
        // and a window that libvips' 8-bit path got wrong is told apart from it, so its files are made again
        #expect(try median(["size": size]).identifier == (size > 3 ? "median(size:\(size),exact)" : "median(size:3)"))
    }

    @Test func medianSizeMustBeOdd() throws {
        let even = #expect(throws: OptionError.self) { try median(["size": 4]) }
        #expect(even?.option == "size")
        #expect(even?.message.contains("odd") == true)
        let zero = #expect(throws: OptionError.self) { try Median(size: 0) }
        #expect(zero?.option == "size")
        let image = try Fixtures.solid(width: 4, height: 4, colour: Fixtures.grey)
        #expect(try Median(size: 1).applied(to: image) === image)
        #expect(try median([:]).identifier == Median(size: 3).identifier)
        #expect(try Median(size: 3).identifier != Median(size: 5).identifier)
    }
}
