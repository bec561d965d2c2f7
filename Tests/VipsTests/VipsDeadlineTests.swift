import Foundation
import TestSupport
import Testing
import Vips

/// `VipsDeadline` beyond a single render: work on images already in memory (an encoder's),
/// and a deadline within another (an input's decode within the input's whole time).
@Suite struct VipsDeadlineTests {
    /// A deadline whose time has run out: its limit passed before anything was asked of it.
    static func runOut() -> VipsDeadline {
        let deadline = VipsDeadline(seconds: 0.001)
        Thread.sleep(forTimeInterval: 0.05)
        return deadline
    }

    @Test func everyEncoderOfOneImageStopsOnceTheTimeHasRunOut() throws {
        // Given an image in memory, as an input's steps leave it for each of its outputs
        let image = try VipsImage(pixels: [UInt8](repeating: 120, count: 400 * 300 * 3), width: 400, height: 300, bands: 3)
        let deadline = Self.runOut()
        defer { deadline.cancel() }
        // When two encoders read it at once under a deadline that has run out
        // Then libvips stops both: the first to notice its kill does not clear it for the other
        try deadline.watching(image) { first in
            try deadline.watching(image) { second in
                #expect(throws: VipsError.self) { try second.encoded(suffix: ".webp") }
                #expect(throws: VipsError.self) { try first.encoded(suffix: ".png") }
            }
        }
        // And once the deadline is done with, the image encodes as before
        deadline.cancel()
        #expect(try deadline.watching(image) { own in try own.encoded(suffix: ".png") }.count > 0)
        #expect(try image.encoded(suffix: ".png").count > 0)
    }

    @Test func aDeadlineWithinAnotherStopsWhenTheOuterRunsOut() throws {
        // Given a computation that takes many seconds, and a deadline of no limit within one of 100 ms
        let slow = try VipsImage(pixels: [UInt8](repeating: 100, count: 2000 * 2000 * 3), width: 2000, height: 2000, bands: 3)
            .gaussianBlurred(sigma: 200)
        let outer = VipsDeadline(seconds: 0.1)
        defer { outer.cancel() }
        let inner = VipsDeadline(seconds: 0, within: outer)
        defer { inner.cancel() }
        // When it is rendered under the inner one
        // Then the outer one stops it, and says it was the one that ran out
        #expect(throws: VipsError.self) { _ = try inner.render(slow) }
        #expect(outer.hasExpired)
        #expect(!inner.hasExpired)
    }

    @Test func anInnerDeadlineCancelledLeavesTheOuterWithNothingToStop() throws {
        // Given an image watched by a deadline within another, the inner one then cancelled
        let image = try VipsImage(pixels: [UInt8](repeating: 60, count: 200 * 200 * 3), width: 200, height: 200, bands: 3)
        let outer = VipsDeadline(seconds: 0.001)
        defer { outer.cancel() }
        let inner = VipsDeadline(seconds: 0, within: outer)
        inner.watch(image)
        inner.cancel()
        // When the outer one runs out
        Thread.sleep(forTimeInterval: 0.05)
        #expect(outer.hasRunOut)
        // Then no kill lands on the image the inner one let go of: it still encodes
        #expect(try image.encoded(suffix: ".png").count > 0)
    }
}
