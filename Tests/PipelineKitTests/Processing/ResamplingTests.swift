import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Resampling premultiplies by alpha, so that transparent pixels' colour does not bleed into
/// their neighbours, and skips that where the alpha band is opaque everywhere (it would change
/// nothing but the arithmetic).
@Suite struct ResamplingTests {
    static func colour(_ x: Int, _ y: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: (x &* 7) ^ y), UInt8(truncatingIfNeeded: x &+ y &* 3), UInt8(truncatingIfNeeded: (x &* y) >> 3)]
    }

    static let size = ImageSize(width: 97, height: 61)

    @Test func anOpaqueAlphaBandIsResampledAsTheColourAloneIs() throws {
        let rgb = try Fixtures.image(width: 300, height: 200, bands: 3) { x, y in Self.colour(x, y) }
        // Rendered, as the decoder's images are: in memory.
        let rgba = try Fixtures.image(width: 300, height: 200, bands: 4) { x, y in Self.colour(x, y) + [255] }.rendered()
        #expect(rgba.isInMemory && rgba.hasOpaqueAlphaInMemory)
        let colourAlone = try rgb.resampled(to: Self.size).bytes()
        let pixels = try rgba.resampled(to: Self.size).bytes()
        #expect(pixels.count == Self.size.width * Self.size.height * 4)
        var differing = 0
        for pixel in 0..<Self.size.width * Self.size.height {
            if Array(pixels[pixel * 4..<pixel * 4 + 3]) != Array(colourAlone[pixel * 3..<pixel * 3 + 3]) || pixels[pixel * 4 + 3] != 255 {
                differing += 1
            }
        }
        #expect(differing == 0, "\(differing) pixels differ from the colour resampled alone")
    }

    @Test func alphaThatIsNotEverywhereOpaqueIsPremultiplied() throws {
        // White, opaque, beside a transparent black hole: premultiplied, the pixels at the edge
        // stay white (only less opaque); straight, the hole's black would darken them.
        let holey = try Fixtures.image(width: 300, height: 200, bands: 4) { x, _ in x < 150 ? [0, 0, 0, 0] : [255, 255, 255, 255] }
            .rendered()
        #expect(holey.isInMemory && !holey.hasOpaqueAlphaInMemory)
        let pixels = try holey.resampled(to: Self.size).bytes()
        var edge = 0
        for x in 0..<Self.size.width {
            let alpha = pixels[(30 * Self.size.width + x) * 4 + 3]
            guard alpha > 8 && alpha < 247 else { continue }
            edge += 1
            #expect(pixels[(30 * Self.size.width + x) * 4] >= 250, "a partly transparent pixel at \(x) took the hole's colour")
        }
        #expect(edge > 0, "the edge is resampled across")

        // An image still to be computed is not computed to find out.
        let lazy = try Fixtures.image(width: 300, height: 200, bands: 4) { x, y in Self.colour(x, y) + [255] }
        #expect(!lazy.isInMemory && !lazy.hasOpaqueAlphaInMemory)
    }

    /// A photograph-like pattern: smooth ramps, a hard edge and fine detail, different across
    /// and down, so that a transposed or mirrored result cannot match.
    static func scene(_ x: Int, _ y: Int) -> [UInt8] {
        let edge = x * 3 > y * 5 ? 60 : 0
        return [
            UInt8(clamping: x * 255 / 300 - edge / 2 + 30), UInt8(clamping: y * 255 / 200 / 2 + edge + ((x / 3 + y / 5) % 2) * 40),
            UInt8(clamping: (x ^ y) % 64 + 100),
        ]
    }

    /// Rows made narrower by reducing the transposed image's columns (libvips' vector path)
    /// come out as libvips' own resize makes them, within its vector path's rounding.
    @Test(arguments: VipsImage.Kernel.allCases) func narrowerRowsMatchLibvipsResize(kernel: VipsImage.Kernel) throws {
        let image = try Fixtures.image(width: 300, height: 200, bands: 3) { x, y in Self.scene(x, y) }.rendered()
        for target in [ImageSize(width: 193, height: 61), ImageSize(width: 211, height: 200), ImageSize(width: 160, height: 170)] {
            let ours = try image.resampled(to: target, kernel: kernel)
            #expect(ours.size == target)
            let libvips = try image.resized(
                horizontalScale: Double(target.width) / 300, verticalScale: Double(target.height) / 200,
                kernel: kernel)
            #expect(libvips.size == target)
            let a = try ours.bytes(), b = try libvips.bytes()
            let differences = zip(a, b).map { abs(Int($0) - Int($1)) }
            let mean = Double(differences.reduce(0, +)) / Double(differences.count)
            // Nearest picks a neighbour where a position falls halfway: rarely, a column over.
            #expect(
                (kernel == .nearest || differences.max() ?? 0 <= 8) && mean < 0.5,
                "\(kernel) to \(target): differences up to \(differences.max() ?? 0), mean \(mean)")
        }
    }

    /// Which resizes take the transpose: 8-bit images reduced across, the reduced rows small
    /// enough to hold; not float (premultiplied) pixels, enlargements or very wide results.
    @Test func whichResizesReduceRowsThroughTheTranspose() throws {
        let image = try Fixtures.image(width: 300, height: 200, bands: 3) { x, y in Self.scene(x, y) }
        #expect(image.reducesRowsThroughTranspose(horizontalScale: 0.5, verticalScale: 0.5, height: 100))
        #expect(image.reducesRowsThroughTranspose(horizontalScale: 0.5, verticalScale: 1, height: 200))
        #expect(!image.reducesRowsThroughTranspose(horizontalScale: 1, verticalScale: 0.5, height: 100))
        #expect(!image.reducesRowsThroughTranspose(horizontalScale: 0.5, verticalScale: 2, height: 400))
        #expect(!(try image.cast(to: .float)).reducesRowsThroughTranspose(horizontalScale: 0.5, verticalScale: 0.5, height: 100))
        let tallest = VipsImage.transposedReductionMostBytes / (300 * 3)
        #expect(image.reducesRowsThroughTranspose(horizontalScale: 0.5, verticalScale: 1, height: tallest))
        #expect(!image.reducesRowsThroughTranspose(horizontalScale: 0.5, verticalScale: 1, height: tallest + 1))
    }

    /// Colour premultiplied in 8 bits, resampled on libvips' vector path and divided again,
    /// composites as the float path's does: within a level or two, wherever alpha is.
    @Test func eightBitPremultipliedAlphaCompositesAsFloatDoes() throws {
        let image = try Fixtures.image(width: 300, height: 200, bands: 4) { x, y in
            // Alpha from 0 (a transparent band on the left) up, across; colour that changes fast.
            let alpha = x < 40 ? 0 : min(255, (x - 40) * 255 / 200)
            return Self.scene(x, y) + [UInt8(alpha)]
        }.rendered()
        #expect(!image.hasOpaqueAlphaInMemory)
        for target in [ImageSize(width: 193, height: 61), ImageSize(width: 97, height: 130)] {
            let ours = try image.resampled(to: target)
            #expect(ours.size == target && ours.bands == 4 && ours.bandFormat == .uchar)
            let float = try image.withPremultipliedAlpha { premultiplied throws(VipsError) in
                try premultiplied.resized(
                    horizontalScale: Double(target.width) / 300, verticalScale: Double(target.height) / 200,
                    kernel: .lanczos3)
            }
            let a = try ours.bytes(), b = try float.bytes()
            var worstComposited = 0, worstAlpha = 0
            for pixel in 0..<target.width * target.height {
                let alphaA = Int(a[pixel * 4 + 3]), alphaB = Int(b[pixel * 4 + 3])
                worstAlpha = max(worstAlpha, abs(alphaA - alphaB))
                for band in 0..<3 {
                    // Over black: colour × alpha, the pixel as it shows.
                    let shownA = Int(a[pixel * 4 + band]) * alphaA / 255, shownB = Int(b[pixel * 4 + band]) * alphaB / 255
                    worstComposited = max(worstComposited, abs(shownA - shownB))
                }
            }
            #expect(worstComposited <= 4 && worstAlpha <= 4, "to \(target): composited up to \(worstComposited), alpha up to \(worstAlpha)")
        }
    }

    /// The 8-bit premultiply rounds as round(c × a / 255) and divides back as round(c × 255 / a),
    /// at most 255, and transparent pixels come back black (no division by zero).
    @Test func eightBitPremultiplyRoundsAndComesBack() throws {
        let pixels: [[UInt8]] = [[200, 100, 50, 128], [255, 255, 255, 255], [90, 180, 30, 0], [255, 7, 1, 1]]
        let image = try Fixtures.image(width: 4, height: 1, bands: 4) { x, _ in pixels[x] }
        let premultiplied = try image.premultipliedInEightBits()
        #expect(try premultiplied.bytes() == [100, 50, 25, 128, 255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 1])
        #expect(
            try premultiplied.unpremultipliedInEightBits().bytes() == [199, 100, 50, 128, 255, 255, 255, 255, 0, 0, 0, 0, 255, 0, 0, 1])
        // Resampling can overshoot alpha in colour; the division stops at 255.
        let overshoot = try Fixtures.image(width: 1, height: 1, bands: 4) { _, _ in [90, 10, 0, 60] }
        #expect(try overshoot.unpremultipliedInEightBits().bytes() == [255, 43, 0, 60])
        // Grey with alpha too; anything else is refused, by name.
        let grey = try Fixtures.image(width: 1, height: 1, bands: 2) { _, _ in [200, 128] }
        #expect(try grey.premultipliedInEightBits().bytes() == [100, 128])
        let rgb = try Fixtures.image(width: 1, height: 1, bands: 3) { _, _ in [1, 2, 3] }
        let refused = #expect(throws: VipsError.self) { try rgb.premultipliedInEightBits() }
        #expect(refused?.message.contains("2 or 4 bands") == true)
    }

    /// Every colour over every alpha divides back exactly: round(c × 255 / a), halves up, at
    /// most 255; 0 where alpha is 0.
    @Test func eightBitUnpremultiplyIsExactForEveryPair() throws {
        let image = try Fixtures.image(width: 256, height: 256, bands: 4) { c, a in [UInt8(c), UInt8(c), UInt8(c), UInt8(a)] }
        let bytes = try image.unpremultipliedInEightBits().bytes()
        var wrong = 0
        for a in 0..<256 {
            for c in 0..<256 {
                let expected = a == 0 ? 0 : min(255, (c * 510 + a) / (2 * a))
                let pixel = (a * 256 + c) * 4
                if Int(bytes[pixel]) != expected || bytes[pixel + 2] != bytes[pixel] || Int(bytes[pixel + 3]) != a { wrong += 1 }
            }
        }
        #expect(wrong == 0, "\(wrong) colour and alpha pairs divide back wrong")
    }

    /// 16-bit pixels with alpha keep libvips' float premultiply, and their format.
    @Test func sixteenBitAlphaStaysSixteenBit() throws {
        let image = try VipsImage(
            pixels16: (0..<(120 * 80)).flatMap { i -> [UInt16] in
                let x = i % 120
                return [UInt16(x * 500), UInt16(i % 80 * 800), 30000, x < 30 ? 0 : 65535]
            }, width: 120, height: 80, bands: 4
        ).labelled(as: .rgb16)
        let resampled = try image.resampled(to: ImageSize(width: 50, height: 33))
        #expect(resampled.size == ImageSize(width: 50, height: 33) && resampled.bandFormat == .ushort && resampled.bands == 4)
    }

    // MARK: Animation frames

    /// A strip of `frames` frames of `width`×`height`, frame `f` drawn by `colour(f, x, y)`, with
    /// its page height set as a loader sets it.
    static func strip(frames: Int, width: Int, height: Int, bands: Int, colour: @escaping (Int, Int, Int) -> [UInt8]) throws -> VipsImage {
        try Fixtures.image(width: width, height: height * frames, bands: bands) { x, y in colour(y / height, x, y % height) }
            .withPageHeight(height).rendered()
    }

    static let frameTargets = [
        ImageSize(width: 37, height: 23), ImageSize(width: 30, height: 20), ImageSize(width: 13, height: 5),
        ImageSize(width: 90, height: 71), ImageSize(width: 60, height: 17),
    ]

    /// Frames of one flat colour each stay exactly that colour, to their edges: any pixel a
    /// kernel took from the frame above or below would show.
    @Test(arguments: [3, 4]) func noFramesPixelsReachAnotherFrame(bands: Int) throws {
        let palette: [[UInt8]] = [[255, 0, 0], [0, 0, 255], [255, 255, 255], [0, 0, 0], [0, 200, 0]]
        let strip = try Self.strip(frames: 7, width: 60, height: 40, bands: bands) { frame, _, _ in
            Array(palette[frame % palette.count].prefix(bands)) + (bands == 4 ? [frame % 2 == 0 ? 255 : 100] : [])
        }
        for target in Self.frameTargets {
            let resampled = try strip.resampledPages(to: target).rendered()
            #expect(resampled.size == ImageSize(width: target.width, height: target.height * 7) && resampled.pageHeight == target.height)
            let pixels = try resampled.bytes()
            for frame in 0..<7 {
                let expected = Array(palette[frame % palette.count].prefix(bands)) + (bands == 4 ? [frame % 2 == 0 ? 255 : 100] : [])
                let start = frame * target.height * target.width * bands
                let framePixels = pixels[start..<start + target.height * target.width * bands]
                let stray = stride(from: framePixels.startIndex, to: framePixels.endIndex, by: bands).filter {
                    Array(framePixels[$0..<$0 + bands]) != expected
                }
                #expect(stray.isEmpty, "frame \(frame) to \(target): \(stray.count) pixels are not its colour")
            }
        }
    }

    /// Each frame comes out as `resampled(to:)` makes it from that frame alone, within the
    /// rounding of reducing heights and widths in two passes (colour weighed by alpha), whether
    /// the frames go all at once or, more than one run holds, a run at a time (the last shorter).
    @Test(arguments: [3, 4], [Int.max, 3 * 60 * 40])
    func eachFrameIsResampledAsItWouldBeAlone(bands: Int, runPixels: Int) throws {
        let strip = try Self.strip(frames: 7, width: 60, height: 40, bands: bands) { frame, x, y in
            Array(Self.scene(x * 5 + frame * 17, y * 5 + frame * 3).prefix(3)) + (bands == 4 ? [UInt8((x * 4 + frame * 40) % 256)] : [])
        }
        for target in Self.frameTargets {
            let resampled = try strip.resampledPages(to: target, kernel: .lanczos3, runPixels: runPixels)
            #expect(resampled.size == ImageSize(width: target.width, height: target.height * 7) && resampled.pageHeight == target.height)
            let together = try resampled.bytes()
            let alone = try VipsImage.joiningPages(try strip.pages().map { try $0.resampled(to: target) }).bytes()
            #expect(together.count == alone.count)
            // Colour weighed by its alpha: where a pixel is nearly transparent, a rounding step
            // in its premultiplied colour is a large one in its colour, and invisible.
            let differences = together.indices.map { index in
                let alphaIndex = index - index % bands + bands - 1
                guard bands == 4, index != alphaIndex else { return abs(Int(together[index]) - Int(alone[index])) }
                return abs(Int(together[index]) * Int(together[alphaIndex]) - Int(alone[index]) * Int(alone[alphaIndex])) / 255
            }
            let mean = Double(differences.reduce(0, +)) / Double(differences.count)
            #expect(differences.max() ?? 0 <= 3 && mean < 0.3, "to \(target): differences up to \(differences.max() ?? 0), mean \(mean)")
        }
    }
}
