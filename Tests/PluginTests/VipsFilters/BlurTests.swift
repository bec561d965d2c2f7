import PipelineKit
import TestSupport
import Testing
import Vips
import VipsFilters

@Suite("Blur")
struct BlurTests {

    private func blur(_ values: [String: any Sendable]) throws -> Blur {
        try Fixtures.processor(Blur.self, values)
    }

    @Test func blurSoftensASharpEdgeAndKeepsTheSize() throws {
        // Given a 40×10 image, black on the left half and white on the right
        let image = try Fixtures.image(width: 40, height: 10, bands: 1) { x, _ in [x < 20 ? 0 : 255] }

        // When it is blurred with sigma 2
        let blur = try blur(["sigma": 2])
        let result = try blur.applied(to: image)

        // Then the size is the same, the edge pixels are grey and the far pixels unchanged
        #expect(result.size == image.size)
        #expect(blur.outputSize(for: image.size) == image.size)
        #expect(result.bandFormat == .uchar)
        for x in [19, 20] {
            let value = try result.pixel(x: x, y: 5)[0]
            #expect(value > 40 && value < 215, "pixel \(x) is \(value)")
        }
        #expect(try result.pixel(x: 1, y: 5) == [0])
        #expect(try result.pixel(x: 38, y: 5) == [255])
    }

    @Test func blurKeepsAlphaAndDoesNotBleedTransparentColour() throws {
        // Given an RGBA image: opaque red on the left, transparent green on the right
        let image = try Fixtures.image(width: 40, height: 10, bands: 4) { x, _ in
            x < 20 ? [255, 0, 0, 255] : [0, 255, 0, 0]
        }

        // When it is blurred
        let result = try blur(["sigma": 2]).applied(to: image)

        // Then alpha is blurred across the edge but the visible colour stays red
        #expect(result.bands == 4)
        #expect(result.bandFormat == .uchar)
        let edge = try result.pixel(x: 20, y: 5)
        #expect(edge[3] > 40 && edge[3] < 215, "edge pixel is \(edge)")
        #expect(edge[0] > 240 && edge[1] < 16, "edge pixel is \(edge)")
    }

    @Test func sigmaIsRequiredAndChecked() {
        let missing = #expect(throws: OptionError.self) { try blur([:]) }
        #expect(missing?.option == "sigma")
        let tooSmall = #expect(throws: OptionError.self) { try Blur(sigma: 0) }
        #expect(tooSmall?.option == "sigma")
    }

    @Test func identifiersDifferWhenSigmaDiffers() throws {
        #expect(try blur(["sigma": 2]).identifier != blur(["sigma": 2.5]).identifier)
        #expect(try blur(["sigma": 2]).identifier == Blur(sigma: 2).identifier)
    }
}
