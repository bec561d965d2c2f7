import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsGeometry

/// The flip and flop steps: mirrors, pixel for pixel.
@Suite("Flip and flop")
struct FlipTests: GeometrySamples {
    @Test func flopMirrorsLeftToRight() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When it is flopped
        let result = try processor(Flop.self).applied(to: image)

        // Then each row is reversed: the left column is the original's right column
        #expect(result.size == image.size)
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(try result.pixel(x: x, y: y) == origin(4 - x, y), "(\(x), \(y))")
            }
        }
    }

    @Test func flipMirrorsTopToBottom() throws {
        // Given an image whose pixels know their coordinates
        let image = try coordinates()

        // When it is flipped
        let result = try processor(Flip.self).applied(to: image)

        // Then the rows are reversed: the top row is the original's bottom row
        #expect(result.size == image.size)
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(try result.pixel(x: x, y: y) == origin(x, 2 - y), "(\(x), \(y))")
            }
        }
    }
}
