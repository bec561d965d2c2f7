import TestSupport
import Testing
import Vips

extension OneAtATime {
    /// Box-shrinking an 8-bit image in memory in one pass (what the resize does first when it
    /// shrinks an image in memory by more than twice).
    @Suite("Box shrink in memory")
    struct BoxShrinkTests {
        @Test(arguments: [(1, 3), (3, 1), (4, 5), (7, 7)])
        func eachPixelIsTheRoundedMeanOfItsBlock(horizontal: Int, vertical: Int) throws {
            // 45×31 with 3 bands: the last blocks of rows and columns are partial.
            let width = 45, height = 31, bands = 3
            let image = try Fixtures.image(width: width, height: height, bands: bands) { x, y in
                [UInt8(truncatingIfNeeded: x * 5 + y), UInt8(truncatingIfNeeded: y * 7), UInt8(truncatingIfNeeded: (x ^ y) * 9)]
            }.rendered()
            let source = try image.bytes()
            let shrunk = try image.boxShrunk(horizontal: horizontal, vertical: vertical)
            let outWidth = (width + horizontal - 1) / horizontal, outHeight = (height + vertical - 1) / vertical
            #expect(shrunk.width == outWidth && shrunk.height == outHeight && shrunk.bands == bands)
            let bytes = try shrunk.bytes()
            var wrong = 0
            for oy in 0..<outHeight {
                for ox in 0..<outWidth {
                    let xs = ox * horizontal..<min(width, (ox + 1) * horizontal), ys = oy * vertical..<min(height, (oy + 1) * vertical)
                    for band in 0..<bands {
                        let sum = ys.reduce(0) { total, y in xs.reduce(total) { $0 + Int(source[(y * width + $1) * bands + band]) } }
                        let count = xs.count * ys.count
                        if Int(bytes[(oy * outWidth + ox) * bands + band]) != (sum + count / 2) / count { wrong += 1 }
                    }
                }
            }
            #expect(wrong == 0, "\(wrong) samples are not their block's rounded mean")
        }

        @Test func aBlockOfOneChangesNothingAndTheMetadataStays() throws {
            let image = try Fixtures.image(width: 9, height: 5, bands: 4) { x, y in [UInt8(x), UInt8(y), 7, 255] }.rendered()
            let same = try image.boxShrunk(horizontal: 1, vertical: 1)
            #expect(try same.bytes() == (try image.bytes()))
            #expect(same.interpretation == image.interpretation && same.hasAlpha)
        }

        @Test func onlyEightBitImagesInMemory() throws {
            let lazy = try Fixtures.image(width: 8, height: 8, bands: 1) { x, _ in [UInt8(x)] }.applying("invert")
            #expect(throws: VipsError.self) { try lazy.boxShrunk(horizontal: 2, vertical: 2) }
            let float = try lazy.cast(to: .float).rendered()
            #expect(throws: VipsError.self) { try float.boxShrunk(horizontal: 2, vertical: 2) }
        }
    }
}
