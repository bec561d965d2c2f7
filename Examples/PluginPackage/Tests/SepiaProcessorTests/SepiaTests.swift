import PipelineKit
import SepiaProcessor
import Testing
import Vips

@Suite struct SepiaTests {
    /// A `width`×`height` image of one colour.
    func solid(_ colour: [UInt8], width: Int = 4, height: Int = 4) throws -> VipsImage {
        try VipsImage(pixels: Array((0..<(width * height)).map { _ in colour }.joined()), width: width, height: height, bands: colour.count)
            .labelled(as: .sRGB)
    }

    func process(_ image: VipsImage, strength: Double) throws -> VipsImage {
        try Sepia(strength: strength).process(image, context: ProcessingContext(input: "test", output: "test", originalSize: image.size))
    }

    @Test func fullSepiaTurnsGreyBrown() throws {
        // Mid-grey 100 becomes (135, 120, 94): red above green above blue
        let toned = try process(try solid([100, 100, 100]), strength: 1)
        let pixel = try toned.pixel(x: 1, y: 1)
        #expect(pixel.map { $0.rounded() } == [135, 120, 94])
    }

    @Test func strengthZeroLeavesTheImageAndAlphaIsKept() throws {
        let image = try solid([10, 200, 90, 128])
        #expect(try process(image, strength: 0).pixel(x: 0, y: 0) == [10, 200, 90, 128])
        let toned = try process(image, strength: 1)
        #expect(toned.bands == 4)
        #expect(try toned.pixel(x: 0, y: 0)[3] == 128)
    }
}
