import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

/// What the resize step tells planning: the shrink on load and the window a cover crop keeps.
@Suite("Resize: planning")
struct ResizePlanningTests: ResizeStepMaking {
    @Test func allowedInputShrinkFollowsTheScale() throws {
        // Given a 4000×3000 input
        let size = ImageSize(width: 4000, height: 3000)

        // Then the decoder may shrink it by as much as the resize will
        #expect(try resize(["width": 1000]).allowedInputShrink(for: size) == 4)
        #expect(try resize(["width": 1000, "height": 1000, "fit": "inside"]).allowedInputShrink(for: size) == 4)
        #expect(try resize(["width": 1000, "height": 1000, "fit": "cover"]).allowedInputShrink(for: size) == 3)
        #expect(try resize(["width": 1000, "height": 1000, "fit": "outside"]).allowedInputShrink(for: size) == 3)
        #expect(try resize(["width": 1000, "height": 500, "fit": "fill"]).allowedInputShrink(for: size) == 4)
        // and not at all when it would enlarge
        #expect(try resize(["width": 8000]).allowedInputShrink(for: size) == 1)
        #expect(try resize(["width": 8000, "withoutEnlargement": true]).allowedInputShrink(for: size) == 1)
    }

    @Test func aCoverCropNamesTheWindowItKeeps() throws {
        // Given a panorama 100000×2000 and a 320×320 cover (scaled to 16000×320, then cropped)
        let size = ImageSize(width: 100000, height: 2000)
        let box: [String: any Sendable] = ["width": 320, "height": 320, "fit": "cover"]

        // Then the window is the crop in the input's pixels: 2000×2000, where the position puts it
        let window = { (position: String) throws -> DecodeWindow? in
            try resize(box.merging(["position": position]) { $1 }).decodeWindow(for: size)
        }
        let size320 = ImageSize(width: 320, height: 320)
        #expect(try window("centre") == DecodeWindow(left: 49000, top: 0, width: 2000, height: 2000, size: size320))
        #expect(try window("west") == DecodeWindow(left: 0, top: 0, width: 2000, height: 2000, size: size320))
        #expect(try window("southeast") == DecodeWindow(left: 98000, top: 0, width: 2000, height: 2000, size: size320))
        // and a tall image's window runs across its whole width
        #expect(
            try resize(box).decodeWindow(for: ImageSize(width: 2000, height: 100000))
                == DecodeWindow(left: 0, top: 49000, width: 2000, height: 2000, size: size320))
        // Nothing is windowed where the whole image matters: smart positions, no crop, other fits
        #expect(try window("attention") == nil)
        #expect(try window("entropy") == nil)
        #expect(try resize(box).decodeWindow(for: ImageSize(width: 3000, height: 3000)) == nil)
        #expect(try resize(["width": 320, "height": 320, "fit": "inside"]).decodeWindow(for: size) == nil)
        #expect(try resize(["width": 320]).decodeWindow(for: size) == nil)
    }

    @Test func theWindowAtItsSizeIsWhatTheStepKeeps() throws {
        // Given a 960×120 image whose columns differ, and a 40×40 cover at the east
        let image = try Fixtures.gradient(width: 960, height: 120)
        let step = try resize(["width": 40, "height": 40, "fit": "cover", "position": "east"])
        let context = ProcessingContext(input: "in", output: "out", originalSize: image.size)
        let window = try #require(step.decodeWindow(for: image.size))

        // When the step runs on the whole image, and on the window resampled to its size
        let whole = try step.process(image, context: context)
        let cut = try image.extracted(left: window.left, top: window.top, width: window.width, height: window.height)
        let windowed = try step.process(
            try cut.resized(
                horizontalScale: Double(window.size.width) / Double(window.width),
                verticalScale: Double(window.size.height) / Double(window.height), kernel: .lanczos3),
            context: context)

        // Then both are 40×40 and the step left the window as it was given
        #expect(window.size == ImageSize(width: 40, height: 40))
        #expect(windowed.size == whole.size)
        #expect(window.left == 960 - 120 && window.width == 120)
        // and its first band (left to right across the image) is the whole's, within resampling
        let (a, b) = (try whole.bytes(), try windowed.bytes())
        let worst = zip(a, b).enumerated().filter { $0.offset % 3 == 0 }.map { abs(Int($0.element.0) - Int($0.element.1)) }.max() ?? 0
        #expect(worst <= 2, "largest difference in the first band: \(worst)")
    }

    @Test func identifiersDifferWhenSettingsDiffer() throws {
        // Given resizes that differ in one setting each
        let base: [String: any Sendable] = ["width": 320, "height": 240]
        let variants: [[String: any Sendable]] = [
            base,
            ["width": 321, "height": 240],
            ["width": 320],
            ["width": 320, "height": 240, "fit": "contain"],
            ["width": 320, "height": 240, "position": "east"],
            ["width": 320, "height": 240, "kernel": "cubic"],
            ["width": 320, "height": 240, "withoutEnlargement": true],
            ["width": 320, "height": 240, "background": "#ffffff"],
        ]

        // When their identifiers are taken
        let identifiers = try variants.map { try resize($0).identifier }

        // Then all differ, and spellings of the same settings agree
        #expect(Set(identifiers).count == variants.count)
        #expect(try resize(["width": 320, "height": 240, "position": "center"]).identifier == identifiers[0])
        #expect(try resize(["width": 320, "height": 240, "background": "#000"]).identifier == identifiers[0])
    }
}
