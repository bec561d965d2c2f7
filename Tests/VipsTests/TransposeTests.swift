import Foundation
import TestSupport
import Testing
import Vips

/// Rows and columns swapped for an 8-bit image in memory: what the resize runs its
/// horizontal reduction through (see `VipsImage.resampled(to:kernel:)`).
@Suite("Transposing an image")
struct TransposeTests {
    @Test(arguments: 1...4) func rowsBecomeColumnsAndBackAgain(bands: Int) throws {
        // 45×70: blocks of 32 leave part blocks at the right and the bottom.
        let width = 45, height = 70
        let image = try Fixtures.image(width: width, height: height, bands: bands) { x, y in
            (0..<bands).map { UInt8(truncatingIfNeeded: x &* 5 &+ y &* 3 &+ $0 &* 71) }
        }.rendered()
        let turned = try image.transposed()
        #expect(turned.width == height && turned.height == width && turned.bands == bands && turned.isInMemory)
        #expect(turned.interpretation == image.interpretation)
        let before = try image.bytes(), after = try turned.bytes()
        var misplaced = 0
        for y in 0..<height {
            for x in 0..<width
            where after[(x * height + y) * bands..<(x * height + y + 1) * bands]
                != before[(y * width + x) * bands..<(y * width + x + 1) * bands]
            {
                misplaced += 1
            }
        }
        #expect(misplaced == 0, "\(misplaced) pixels are not where the transpose puts them")
        #expect(try turned.transposed().bytes() == before)
    }

    @Test func theMetadataStaysWithThePixels() throws {
        let source = try Fixtures.image(width: 30, height: 20, bands: 3) { x, y in [UInt8(x), UInt8(y), 9] }
        let image = try VipsImage.open(data: try HostileFixtures.png(source, orientation: 6)).rendered()
        #expect(image.orientation == 6)
        let turned = try image.transposed()
        #expect(turned.orientation == 6 && turned.width == 20 && turned.height == 30)
    }

    @Test func anImageTurnedUprightStaysUpright() throws {
        // Given an image turned upright, whose EXIF block still says 6, as autorotation leaves it
        let source = try Fixtures.image(width: 30, height: 20, bands: 3) { x, y in [UInt8(x), UInt8(y), 9] }
        let upright = try VipsImage.open(data: try HostileFixtures.png(source, orientation: 6)).autorotated().rendered()
        #expect(upright.orientation == 1 && upright.blobLength("exif-data") != nil)
        // Then what is made from its pixels is upright too, not tagged to be turned again
        #expect(try upright.transposed().orientation == 1)
        #expect(try upright.boxShrunk(horizontal: 2, vertical: 2).orientation == 1)
    }

    @Test func anImageNotYetComputedIsComputedForIt() throws {
        // An operation's result is computed only when read: here, strip by strip.
        let lazy = try Fixtures.image(width: 70, height: 45, bands: 3) { x, y in [UInt8(x), UInt8(y), UInt8(x ^ y)] }.applying("invert")
        #expect(!lazy.isInMemory)
        #expect(try lazy.transposed().bytes() == (try lazy.rendered().transposed().bytes()))
    }

    @Test func onlyEightBitImagesOfOneToFourBands() throws {
        let image = try Fixtures.image(width: 8, height: 6, bands: 3) { x, y in [UInt8(x), UInt8(y), 0] }
        let float = #expect(throws: VipsError.self) { try image.cast(to: .float).transposed() }
        #expect(float?.message.contains("8-bit") == true)
        #expect(throws: VipsError.self) { try image.applying("bandjoin_const", ["c": .numbers([1, 2])]).transposed() }
    }
}
