import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An animation made smaller keeps its timing: every frame the input shows, each for as long,
/// and no frame the input does not show. A screen recording is the hard case: frames smaller
/// than the canvas drawn over what came before (with disposal methods), a canvas whose height
/// does not scale evenly, and more frames than the decoder reads at full size at once.
@Suite struct AnimationTimingTests {
    static let palette: [[UInt8]] = [[0, 0, 0], [230, 230, 230], [200, 40, 40], [40, 200, 40], [40, 40, 220], [230, 200, 40]]
    static let transparent: UInt8 = 255
    /// The canvas of a terminal recording: 421 rows become 210.5 at half the width.
    static let width = 640
    static let height = 421
    /// More than one run of the decoder's (`ImageDecoder.animationRunPixels`), and not a whole
    /// number of runs.
    static var frameCount: Int { ImageDecoder.animationRunPixels / (width * height) + 2 }

    /// How long an animation with these frame delays plays.
    static func total(_ delays: [Int]) -> Int { delays.reduce(0, +) }

    /// A recording: a full first frame, then partial updates, some with holes (the transparent
    /// index) and each with its own disposal and delay (hundredths of a second).
    static func recording() -> (data: Data, delays: [Int]) {
        var generator = SeededGenerator(seed: 7)
        let first = GIFWriter.Frame(
            left: 0, top: 0, width: width, height: height,
            indices: (0..<(width * height)).map { UInt8($0 / width / 40 % 2) }, delay: 30)
        var frames = [first]
        let disposals: [GIFWriter.Disposal] = [.keep, .keep, .background, .previous]
        for index in 1..<frameCount {
            let frameWidth = Int.random(in: 120...300, using: &generator)
            let frameHeight = Int.random(in: 40...160, using: &generator)
            let colour = UInt8(2 + index % 4)
            let indices = (0..<(frameWidth * frameHeight)).map { $0 % 7 == 0 ? transparent : colour }
            frames.append(
                GIFWriter.Frame(
                    left: Int.random(in: 0...(width - frameWidth), using: &generator),
                    top: Int.random(in: 0...(height - frameHeight), using: &generator), width: frameWidth, height: frameHeight,
                    indices: indices, delay: [2, 5, 7, 12, 40][index % 5], disposal: disposals[index % disposals.count],
                    transparent: transparent))
        }
        let data = GIFWriter(width: width, height: height, palette: palette).data(frames)
        return (data, frames.map { $0.delay * 10 })
    }

    /// Each page's mean colour over a black background, and whether it shows any pixel.
    static func pages(of image: VipsImage) throws -> [(mean: Double, shows: Bool)] {
        try image.pages().map { page in
            let flat = try page.hasAlpha ? page.flattened(background: [0, 0, 0]) : page
            let mean = try #require(try Vips.call("avg", ["in": .image(flat)])["out"]?.number)
            guard page.hasAlpha else { return (mean, true) }
            let alpha = try page.applying("extract_band", ["band": .integer(page.bands - 1)])
            let most = try #require(try Vips.call("max", ["in": .image(alpha)])["out"]?.number)
            return (mean, most > 0)
        }
    }

    @Test func aRecordingMadeSmallerKeepsEveryFrameAndItsTimeAndAddsNone() async throws {
        // Given a recording of partial frames over a 640×421 canvas, more frames than one run
        let (data, delays) = Self.recording()
        let directory = try TemporaryDirectory()
        try directory.write(data, to: "in/term.gif")
        let input = try VipsImage.open(file: directory.path + "/in/term.gif", options: "n=-1")
        try #require(input.pageCount == Self.frameCount && input.frameDelays == delays)
        let inputPages = try Self.pages(of: input.rendered())
        try #require(inputPages.allSatisfy { $0.shows })
        // When it is made 320 pixels wide, as a GIF and as a WebP
        let json = PipelineHarness.json(
            inputs: ["in/term.gif"],
            outputs: [
                #"{"name": "g", "steps": [{"resize": {"width": 320}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
                #"{"name": "w", "steps": [{"resize": {"width": 320}}], "encode": {"format": "webp", "lossless": true}, "path": "out/{stem}.webp"}"#,
            ])
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 0)
        for name in ["term.gif", "term.webp"] {
            // Then each has the input's frames, in order, each for as long, and so the same total
            let output = try VipsImage.open(file: directory.path + "/out/" + name, options: "n=-1")
            #expect(output.width == 320, "\(name)")
            #expect(output.pageCount == Self.frameCount, "\(name)")
            #expect(output.frameDelays == delays, "\(name)")
            #expect(output.frameDelays.map(Self.total) == Self.total(delays), "\(name)")
            // And no frame is blank, and each looks like the input's frame at its place
            let outputPages = try Self.pages(of: output.rendered())
            #expect(outputPages.count == inputPages.count, "\(name)")
            for (index, (made, original)) in zip(outputPages, inputPages).enumerated() {
                #expect(made.shows, "\(name) frame \(index) is fully transparent")
                #expect(abs(made.mean - original.mean) < 6, "\(name) frame \(index): mean \(made.mean), the input's \(original.mean)")
            }
        }
    }
}
