import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

/// What the resize suites build their steps with.
protocol ResizeStepMaking {}

extension ResizeStepMaking {
    func resize(_ values: [String: any Sendable]) throws -> Resize {
        try Fixtures.processor(Resize.self, values)
    }
}

/// The resize step's options and its animations.
@Suite("Resize")
struct ResizeTests: ResizeStepMaking {
    // MARK: Options

    @Test func neitherWidthNorHeightIsAnOptionErrorNamingBoth() {
        // When a resize names no size
        let error = #expect(throws: OptionError.self) { try resize(["fit": "cover"]) }

        // Then the error names both options
        #expect(error?.message.contains("width") == true)
        #expect(error?.message.contains("height") == true)
    }

    @Test func badOptionsAreOptionErrorsNamingTheOption() {
        #expect(throws: OptionError(option: "position", "unknown value \"middle\"")) {
            try resize(["width": 10, "position": "middle"])
        }
        let zero = #expect(throws: OptionError.self) { try Resize(width: 0) }
        #expect(zero?.option == "width")
        let colour = #expect(throws: OptionError.self) { try Resize(width: 10, background: [300, 0, 0]) }
        #expect(colour?.option == "background")
        // A position the fit does not use is named, with the fits that use one
        for fit in ["inside", "outside", "fill"] {
            let unused = #expect(throws: OptionError.self) { try resize(["width": 10, "height": 10, "fit": fit, "position": "north"]) }
            #expect(unused?.option == "position" && unused?.message.contains("fit \(fit) shows the whole image") == true, "\(fit)")
        }
        for fit in ["cover", "contain"] {
            #expect(throws: Never.self) { try resize(["width": 10, "height": 10, "fit": fit, "position": "north"]) }
        }
    }

    // MARK: Animations

    /// Every frame of an animation at once gives each frame as the step makes it alone, for the
    /// fits and gravities it takes whole; a smart gravity's crop and a letterbox are left to be
    /// made frame by frame.
    @Test(
        arguments: [
            ["width": 50, "height": 50, "fit": "cover"], ["width": 50, "height": 20, "fit": "cover", "position": "northeast"],
            ["width": 30, "height": 50, "fit": "cover", "position": "south"], ["width": 70, "fit": "inside"],
            ["width": 40, "height": 10, "fit": "fill"], ["width": 90, "height": 90, "fit": "outside"],
        ] as [[String: any Sendable]])
    func everyFrameAtOnceIsEachFrameAlone(options: [String: any Sendable]) throws {
        let resize = try resize(options)
        let frames = try Fixtures.image(width: 120, height: 80 * 5, bands: 3) { x, y in
            let frame = y / 80
            return [UInt8((x * 2 + frame * 50) % 256), UInt8((y % 80) * 3), UInt8(((x / 8 + y / 8) % 2) * 200 + frame * 10)]
        }.withPageHeight(80).rendered()
        let context = ProcessingContext(input: "anim.gif", output: "o", originalSize: ImageSize(width: 120, height: 80))
        let together = try #require(try resize.processFrames(frames, context: context)).rendered()
        let alone = try VipsImage.joiningPages(try frames.pages().map { try resize.process($0, context: context) }).rendered()
        #expect(together.size == alone.size && together.pageHeight == alone.pageHeight)
        let differences = zip(try together.bytes(), try alone.bytes()).map { abs(Int($0) - Int($1)) }
        #expect(differences.max() ?? 0 <= 3, "differences up to \(differences.max() ?? 0)")
    }

    /// A letterbox is made frame by frame; a smart crop at once, at the window it finds on the
    /// first frame.
    @Test func framesLetterboxedAreLeftToBeMadeOneByOneAndSmartCropsTakeTheFirstFramesWindow() throws {
        let frames = try Fixtures.image(width: 60, height: 40 * 3, bands: 3) { x, y in [UInt8(x), UInt8(y), 0] }.withPageHeight(40)
        let context = ProcessingContext(input: "anim.gif", output: "o", originalSize: ImageSize(width: 60, height: 40))
        #expect(try resize(["width": 30, "height": 30, "fit": "contain"]).processFrames(frames, context: context) == nil)
        let smart = try resize(["width": 30, "height": 30, "fit": "cover", "position": "attention"])
        let all = try #require(try smart.processFrames(frames, context: context))
        #expect(all.pageHeight == 30 && all.height == 90 && all.width == 30)
        let first = try smart.process(try frames.extracted(left: 0, top: 0, width: 60, height: 40), context: context)
        let pages = try all.pages()
        // Red is the column: every frame's window starts where the first frame's does
        for page in pages { #expect(try page.rendered().pixel(x: 3, y: 3)[0] == first.rendered().pixel(x: 3, y: 3)[0]) }
    }
}
