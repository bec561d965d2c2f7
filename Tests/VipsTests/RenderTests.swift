import Foundation
import TestSupport
import Testing
import Vips

/// Pixels computed into memory on the calling thread (`renderedHere()`, what `rendered()` does
/// with one libvips thread per image, as runs set it) are the ones libvips' thread pool computes.
@Suite("Rendering on the calling thread")
struct RenderTests {
    /// A lazy image of `format` taller than many strips, each pixel its own value.
    private static func lazyImage(bands: Int, format: VipsImage.BandFormat) throws -> VipsImage {
        let source = try Fixtures.image(width: 37, height: 613, bands: bands) { x, y in
            (0..<bands).map { UInt8(truncatingIfNeeded: x &* 7 &+ y &* 3 &+ $0 &* 59) }
        }
        // Inverted, then cast: two operations still to run when the pixels are asked for.
        return try source.applying("invert").cast(to: format)
    }

    @Test(arguments: [1, 2, 3, 4], [VipsImage.BandFormat.uchar, .ushort, .float])
    func theSamePixelsAsLibvipsOwnRender(bands: Int, format: VipsImage.BandFormat) throws {
        let lazy = try Self.lazyImage(bands: bands, format: format)
        #expect(!lazy.isInMemory)
        let here = try lazy.renderedHere()
        #expect(here.isInMemory)
        #expect(here.width == lazy.width && here.height == lazy.height && here.bands == bands && here.bandFormat == format)
        // values() reads through libvips' own sink, the thread pool's path.
        #expect(try here.values() == (try lazy.values()))
    }

    @Test func theMetadataComesToo() throws {
        let source = try Fixtures.image(width: 30, height: 20, bands: 3) { x, y in [UInt8(x), UInt8(y), 9] }
        let opened = try VipsImage.open(data: try HostileFixtures.png(source, orientation: 6))
        #expect(!opened.isInMemory)
        let here = try opened.renderedHere()
        #expect(here.orientation == 6)
        #expect(try here.bytes() == (try source.bytes()))
    }

    @Test func anImageInMemoryComesBackAsItIs() throws {
        let image = try Fixtures.image(width: 5, height: 4, bands: 3) { x, y in [UInt8(x), UInt8(y), 1] }.rendered()
        #expect(image.isInMemory)
        let here = try image.renderedHere()
        #expect(here.isInMemory)
        #expect(try here.bytes() == (try image.bytes()))
    }

    @Test func aKilledSourceStopsTheRender() throws {
        // A deadline past its limit kills what it watches: the strips after that fail, as they
        // do in libvips' pool, instead of an image coming back half computed.
        let pixels = try Fixtures.image(width: 64, height: 300, bands: 3) { x, y in [UInt8(x), UInt8(truncatingIfNeeded: y), 40] }
        let source = try VipsImage.open(data: try Fixtures.jpeg(pixels))
        let deadline = VipsDeadline(seconds: 0.001)
        defer { deadline.cancel() }
        let limit = Date().addingTimeInterval(5)
        while !deadline.hasExpired, Date() < limit { Thread.sleep(forTimeInterval: 0.002) }
        #expect(deadline.hasExpired)
        deadline.watch(source)
        #expect(throws: VipsError.self) { try source.applying("invert").renderedHere() }
    }
}
