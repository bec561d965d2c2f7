import Foundation
import TestSupport
import Testing
import Vips

extension OneAtATime {
    /// The direct WebP decode is checked against libvips' own WebP loader reading the same bytes at
    /// the same scale: the pixels must be the same, the metadata must come along, and what it
    /// declines or cannot decode must come back nil, so that libvips reads it instead.
    @Suite("Still WebP images decoded straight by libwebp")
    struct WebPTests {
        /// Lossy and lossless, with and without alpha, at full size and scaled while decoding to
        /// sizes libvips' loader rounds to the same (its `scale` times each side, rounded).
        @Test(arguments: [
            (3, ".webp[Q=80]"),
            (4, ".webp[Q=75]"),
            (3, ".webp[lossless]"),
            (4, ".webp[lossless]"),
        ])
        func decodesLibvipsPixels(bands: Int, suffix: String) throws {
            // Colour (and alpha) that varies across the image, as a photograph's does.
            let image = try Fixtures.image(width: 600, height: 400, bands: bands) { x, y in
                [UInt8(x * 255 / 599), UInt8(y * 255 / 399), UInt8((x * y) % 251), UInt8(255 - (x + y) % 200)].prefix(bands).map { $0 }
            }
            let data = try image.encoded(suffix: suffix)
            let header = try VipsImage.open(data: data)
            #expect(header.bands == bands, "the fixture lacks what the test checks")
            for (width, height) in [(600, 400), (200, 133), (451, 301), (1, 1)] {
                let ours = try #require(
                    VipsImage.decodeWebP(bytes: VipsBytes(data), header: header, width: width, height: height), "\(suffix) at \(width)")
                let options = width == 600 ? "" : "scale=\(Double(width) / 600)"
                let theirs = try VipsImage.open(data: data, options: options)
                #expect(theirs.width == width && theirs.height == height, "libvips rounds \(width) otherwise")
                #expect(ours.width == width && ours.height == height && ours.bands == bands)
                #expect(try ours.bytes() == theirs.bytes(), "\(suffix) at \(width)×\(height)")
            }
        }

        /// A file reads as its bytes do, and the profile and EXIF travel with the pixels.
        @Test func aFileCarriesItsMetadata() throws {
            let directory = try TemporaryDirectory()
            var image = try Fixtures.gradient(width: 120, height: 80)
            image = try image.withOrientation(6)
            let path = try directory.write(try image.encoded(suffix: ".webp[profile=srgb]"), to: "profiled.webp")
            let header = try VipsImage.open(file: path)
            #expect(header.hasICCProfile && header.orientation == 6, "the fixture lacks what the test checks")
            let decoded = try #require(VipsImage.decodeWebP(file: path, header: header, width: 60, height: 40))
            #expect(decoded.hasICCProfile && decoded.orientation == 6)
            #expect(decoded.loader == header.loader)
            #expect(try decoded.bytes() == VipsImage.open(file: path, options: "scale=0.5").bytes())
        }

        /// Declined: an animation (libvips stacks its frames), a size larger than the image, and
        /// another format. A truncated file comes back nil, as libvips' loader fails on it; damaged
        /// bytes end as libvips' loader ends: both fail, or both give the same pixels.
        @Test func leavesToLibvipsWhatItDoesNotDecode() throws {
            let animation = try HostileFixtures.animation("webp")
            let animated = try VipsImage.open(data: animation)
            #expect(animated.pageCount > 1, "the fixture lacks what the test checks")
            #expect(
                VipsImage.decodeWebP(bytes: VipsBytes(animation), header: animated, width: animated.width, height: animated.height) == nil)

            let data = try Fixtures.gradient(width: 64, height: 48).encoded(suffix: ".webp")
            let header = try VipsImage.open(data: data)
            #expect(VipsImage.decodeWebP(bytes: VipsBytes(data), header: header, width: 65, height: 48) == nil)
            let png = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
            #expect(VipsImage.decodeWebP(bytes: VipsBytes(png), header: try VipsImage.open(data: png), width: 64, height: 48) == nil)

            let truncated = HostileFixtures.truncated(data)
            #expect(VipsImage.decodeWebP(bytes: VipsBytes(truncated), header: header, width: 64, height: 48) == nil)
            #expect(throws: VipsError.self) { try VipsImage.open(data: truncated).bytes() }

            let lossless = try Fixtures.gradient(width: 64, height: 48).encoded(suffix: ".webp[lossless]")
            for (original, fraction) in [data, lossless].flatMap({ bytes in stride(from: 0.0, through: 0.98, by: 0.02).map { (bytes, $0) } }
            ) {
                let damaged = HostileFixtures.corrupted(original, at: fraction, count: 16)
                guard let damagedHeader = try? VipsImage.open(data: damaged) else { continue }
                let ours = VipsImage.decodeWebP(
                    bytes: VipsBytes(damaged), header: damagedHeader, width: damagedHeader.width, height: damagedHeader.height)
                let theirs = Result { try VipsImage.open(data: damaged).bytes() }
                switch (ours, theirs) {
                case (nil, .failure): break
                case (let ours?, .success(let pixels)): #expect(try ours.bytes() == pixels, "damaged at \(fraction)")
                default:
                    Issue.record(
                        "damaged at \(fraction): ours \(ours == nil ? "failed" : "decoded"), libvips' \(theirs.isSuccess ? "decoded" : "failed")"
                    )
                }
            }
        }
    }
}
