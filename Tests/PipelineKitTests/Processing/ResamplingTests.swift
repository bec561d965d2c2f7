import Testing
@testable import PipelineKit
import TestSupport
import Vips

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
        let holey = try Fixtures.image(width: 300, height: 200, bands: 4) { x, _ in x < 150 ? [0, 0, 0, 0] : [255, 255, 255, 255] }.rendered()
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
        return [UInt8(clamping: x * 255 / 300 - edge / 2 + 30), UInt8(clamping: y * 255 / 200 / 2 + edge + ((x / 3 + y / 5) % 2) * 40),
                UInt8(clamping: (x ^ y) % 64 + 100)]
    }

    /// Rows made narrower by reducing the transposed image's columns (libvips' vector path)
    /// come out as libvips' own resize makes them, within its vector path's rounding.
    @Test(arguments: VipsImage.Kernel.allCases) func narrowerRowsMatchLibvipsResize(kernel: VipsImage.Kernel) throws {
        let image = try Fixtures.image(width: 300, height: 200, bands: 3) { x, y in Self.scene(x, y) }.rendered()
        for target in [ImageSize(width: 193, height: 61), ImageSize(width: 211, height: 200), ImageSize(width: 160, height: 170)] {
            let ours = try image.resampled(to: target, kernel: kernel)
            #expect(ours.size == target)
            let libvips = try image.resized(horizontalScale: Double(target.width) / 300, verticalScale: Double(target.height) / 200,
                                            kernel: kernel)
            #expect(libvips.size == target)
            let a = try ours.bytes(), b = try libvips.bytes()
            let differences = zip(a, b).map { abs(Int($0) - Int($1)) }
            let mean = Double(differences.reduce(0, +)) / Double(differences.count)
            // Nearest picks a neighbour where a position falls halfway: rarely, a column over.
            #expect((kernel == .nearest || differences.max() ?? 0 <= 8) && mean < 0.5, "\(kernel) to \(target): differences up to \(differences.max() ?? 0), mean \(mean)")
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
}
