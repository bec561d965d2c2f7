import Testing
import TestSupport
import PipelineKit
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
}
