import Foundation
import TestSupport
import Testing
import Vips

/// An animation's pages, cut through strips when there are more than an image may have readers
/// cut from it: every page, in order, each its own.
@Suite("Cutting an image into its pages")
struct PagesTests {
    @Test(arguments: [1, 5, 32, 33, 100, 1025]) func everyPageComesOnceInItsOrder(count: Int) throws {
        // Each page 3×2, its pixels the page's number (in two bytes) and its row
        let frames = try Fixtures.image(width: 3, height: 2 * count, bands: 3) { _, y in
            [UInt8((y / 2) & 0xFF), UInt8((y / 2) >> 8), UInt8(y % 2)]
        }.withPageHeight(2)
        let pages = try frames.pages(fanOut: 4)
        #expect(pages.count == count)
        for (index, page) in pages.enumerated() {
            #expect(page.width == 3 && page.height == 2, "page \(index)")
            let top = try page.pixel(x: 1, y: 0), bottom = try page.pixel(x: 2, y: 1)
            #expect(top == [Double(index & 0xFF), Double(index >> 8), 0] && bottom[2] == 1, "page \(index): \(top)")
        }
        // The default fan-out cuts the same pages
        #expect(try frames.pages().count == count)
    }
}
