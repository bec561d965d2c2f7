import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

/// The resize step's pixels: alpha, grey images and kernels.
@Suite("Resize: pixels")
struct ResizePixelTests: ResizeStepMaking {
    @Test func alphaIsKeptAndTransparentColourDoesNotBleed() throws {
        // Given an 8-bit RGBA image: opaque red up to x = 30, fully transparent green after it
        let image = try Fixtures.image(width: 64, height: 64, bands: 4) { x, _ in
            x < 30 ? [255, 0, 0, 255] : [0, 255, 0, 0]
        }

        // When it is shrunk to 16×16, so that output pixel 7 straddles the edge
        let result = try resize(["width": 16]).applied(to: image)

        // Then alpha and the 8-bit format survive
        #expect(result.size == ImageSize(width: 16, height: 16))
        #expect(result.bands == 4)
        #expect(result.bandFormat == .uchar)
        #expect(Fixtures.isClose(try result.pixel(x: 2, y: 8), [255, 0, 0, 255], tolerance: Fixtures.lossyTolerance))
        #expect(try result.pixel(x: 14, y: 8)[3] < 2)
        // and the half-transparent edge pixel is red, not tinted by the hidden green
        let edge = try result.pixel(x: 7, y: 8)
        #expect((64...192).contains(edge[3]), "edge pixel is \(edge)")
        #expect(edge[0] > 240 && edge[1] < 16, "edge pixel is \(edge)")
    }

    @Test func containOnAGreyImageUsesTheBackgroundsLuminance() throws {
        // Given a one-band black 100×50 image
        let image = try Fixtures.solid(width: 100, height: 50, colour: [0])

        // When it is contained in 50×50 on white
        let result = try resize(["width": 50, "height": 50, "fit": "contain", "background": "white"]).applied(to: image)

        // Then it stays one band, with white bars
        #expect(result.bands == 1)
        #expect(Fixtures.isClose(try result.pixel(x: 25, y: 2), [255], tolerance: 0.5))
        #expect(try result.pixel(x: 25, y: 25) == [0])
    }

    @Test func containOnAGreyImageWithAColourKeepsTheColour() throws {
        // Given a one-band black 100×50 image, contained in 50×50 on red
        let image = try Fixtures.solid(width: 100, height: 50, colour: [0])
        let result = try resize(["width": 50, "height": 50, "fit": "contain", "background": "#ff0000"]).applied(to: image)

        // Then the bars are red, the image black
        #expect(result.bands == 3)
        #expect(Fixtures.isClose(try result.pixel(x: 25, y: 2), [255, 0, 0], tolerance: 0.5))
        #expect(try result.pixel(x: 25, y: 25) == [0, 0, 0])
    }

    @Test func nearestKernelEnlargesWithoutNewValues() throws {
        // Given a 4×1 image of two black and two white pixels
        let image = try Fixtures.image(width: 4, height: 1, bands: 1) { x, _ in [x < 2 ? 0 : 255] }

        // When it is doubled with the nearest kernel
        let result = try resize(["width": 8, "kernel": "nearest"]).applied(to: image)

        // Then every pixel is still pure black or pure white
        #expect(result.size == ImageSize(width: 8, height: 2))
        for x in 0..<8 {
            #expect([0.0, 255.0].contains(try result.pixel(x: x, y: 0)[0]))
        }
    }
}
