import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

@Suite("Resize")
struct ResizeTests {

    private func resize(_ values: [String: any Sendable]) throws -> Resize {
        try Fixtures.processor(Resize.self, values)
    }

    // MARK: Sizes

    struct FitCase: CustomTestStringConvertible, Sendable {
        let input: (Int, Int)
        let box: (Int, Int)
        let fit: String
        let expected: (Int, Int)
        var testDescription: String { "\(fit) \(input) into \(box) → \(expected)" }
    }

    static let fitCases: [FitCase] = [
        // Landscape 640×480 into a square.
        FitCase(input: (640, 480), box: (200, 200), fit: "cover", expected: (200, 200)),
        FitCase(input: (640, 480), box: (200, 200), fit: "contain", expected: (200, 200)),
        FitCase(input: (640, 480), box: (200, 200), fit: "fill", expected: (200, 200)),
        FitCase(input: (640, 480), box: (200, 200), fit: "inside", expected: (200, 150)),
        FitCase(input: (640, 480), box: (200, 200), fit: "outside", expected: (267, 200)),
        // Portrait 480×640 into a square.
        FitCase(input: (480, 640), box: (200, 200), fit: "cover", expected: (200, 200)),
        FitCase(input: (480, 640), box: (200, 200), fit: "contain", expected: (200, 200)),
        FitCase(input: (480, 640), box: (200, 200), fit: "fill", expected: (200, 200)),
        FitCase(input: (480, 640), box: (200, 200), fit: "inside", expected: (150, 200)),
        FitCase(input: (480, 640), box: (200, 200), fit: "outside", expected: (200, 267)),
        // Landscape into a wider box: height limits inside, width limits outside.
        FitCase(input: (640, 480), box: (300, 100), fit: "cover", expected: (300, 100)),
        FitCase(input: (640, 480), box: (300, 100), fit: "contain", expected: (300, 100)),
        FitCase(input: (640, 480), box: (300, 100), fit: "fill", expected: (300, 100)),
        FitCase(input: (640, 480), box: (300, 100), fit: "inside", expected: (133, 100)),
        FitCase(input: (640, 480), box: (300, 100), fit: "outside", expected: (300, 225)),
        // Portrait into a wide box.
        FitCase(input: (480, 640), box: (300, 100), fit: "inside", expected: (75, 100)),
        FitCase(input: (480, 640), box: (300, 100), fit: "outside", expected: (300, 400)),
        FitCase(input: (480, 640), box: (300, 100), fit: "cover", expected: (300, 100)),
        // Enlarging a small image.
        FitCase(input: (100, 50), box: (400, 400), fit: "inside", expected: (400, 200)),
        FitCase(input: (100, 50), box: (400, 400), fit: "outside", expected: (800, 400)),
        FitCase(input: (100, 50), box: (400, 400), fit: "cover", expected: (400, 400)),
    ]

    @Test("Each fit mode gives sharp's size for portrait and landscape inputs", arguments: fitCases)
    func fitModeSizes(_ example: FitCase) throws {
        // Given an image and a resize to a box with a fit mode
        let image = try Fixtures.solid(width: example.input.0, height: example.input.1, colour: Fixtures.grey)
        let resize = try resize(["width": example.box.0, "height": example.box.1, "fit": example.fit])

        // When it is planned and processed
        let planned = resize.outputSize(for: image.size)
        let result = try resize.applied(to: image)

        // Then both give the expected size
        let expected = ImageSize(width: example.expected.0, height: example.expected.1)
        #expect(planned == expected)
        #expect(result.size == expected)
    }

    @Test func widthOnlyOrHeightOnlyKeepsTheAspectRatioWhateverTheFit() throws {
        // Given a 640×480 image
        let image = try Fixtures.solid(width: 640, height: 480, colour: Fixtures.grey)

        // When it is resized by width only, or by height only (fill would stretch a box)
        let byWidth = try resize(["width": 320, "fit": "fill"]).applied(to: image)
        let byHeight = try resize(["height": 120]).applied(to: image)

        // Then the other side follows the aspect ratio
        #expect(byWidth.size == ImageSize(width: 320, height: 240))
        #expect(byHeight.size == ImageSize(width: 160, height: 120))
    }

    @Test func withoutEnlargementNeverScalesUp() throws {
        // Given a 100×50 image, smaller than the 400×400 box
        let image = try Fixtures.solid(width: 100, height: 50, colour: Fixtures.grey)

        // When each mode resizes it without enlargement
        // Then the image keeps its size (cover crops to at most the box, which is nothing here)
        for fit in ["cover", "fill", "inside", "outside"] {
            let resize = try resize(["width": 400, "height": 400, "fit": fit, "withoutEnlargement": true])
            #expect(resize.outputSize(for: image.size) == image.size, "\(fit)")
            #expect(try resize.applied(to: image).size == image.size, "\(fit)")
        }
        let widthOnly = try resize(["width": 400, "withoutEnlargement": true])
        #expect(try widthOnly.applied(to: image).size == image.size)
        #expect(try resize(["width": 400]).applied(to: image).size == ImageSize(width: 400, height: 200))
    }

    @Test func withoutEnlargementCoverCropsToAtMostTheBox() throws {
        // Given a 300×100 image and a 200×200 cover box, which would need a ×2 enlargement
        let image = try Fixtures.solid(width: 300, height: 100, colour: Fixtures.grey)
        let resize = try resize(["width": 200, "height": 200, "withoutEnlargement": true])

        // When it is processed
        let result = try resize.applied(to: image)

        // Then it is not scaled, only cropped to the box's width
        #expect(result.size == ImageSize(width: 200, height: 100))
        #expect(resize.outputSize(for: image.size) == result.size)
    }

    @Test func withoutEnlargementContainLetterboxesTheUnscaledImage() throws {
        // Given a red 100×50 image and a 400×400 contain box on white
        let image = try Fixtures.solid(width: 100, height: 50, colour: Fixtures.red)
        let resize = try resize([
            "width": 400, "height": 400, "fit": "contain", "withoutEnlargement": true, "background": "#ffffff",
        ])

        // When it is processed
        let result = try resize.applied(to: image)

        // Then the image sits unscaled in the middle of the box: x 150..<250, y 175..<225
        #expect(result.size == ImageSize(width: 400, height: 400))
        let white: [Double] = [255, 255, 255]
        let red: [Double] = [255, 0, 0]
        #expect(try result.pixel(x: 149, y: 200) == white)
        #expect(try result.pixel(x: 150, y: 200) == red)
        #expect(try result.pixel(x: 249, y: 200) == red)
        #expect(try result.pixel(x: 250, y: 200) == white)
        #expect(try result.pixel(x: 200, y: 174) == white)
        #expect(try result.pixel(x: 200, y: 175) == red)
        #expect(try result.pixel(x: 200, y: 224) == red)
        #expect(try result.pixel(x: 200, y: 225) == white)
    }

    @Test func plannedSizeEqualsProcessedSizeForManyCombinations() throws {
        // Given inputs of awkward sizes and many targets, in every mode
        let inputs = [(1, 1), (7, 3), (3, 7), (100, 37), (37, 100), (641, 479), (333, 777), (1000, 10)]
        let sides: [Int?] = [nil, 1, 5, 64, 99, 333, 1001]
        var checked = 0
        for (inputWidth, inputHeight) in inputs {
            let image = try Fixtures.solid(width: inputWidth, height: inputHeight, colour: Fixtures.grey)
            for width in sides {
                for height in sides where width != nil || height != nil {
                    for fit in Resize.Fit.allCases {
                        for withoutEnlargement in [false, true] {
                            let resize = try Resize(width: width, height: height, fit: fit, withoutEnlargement: withoutEnlargement)

                            // When each is planned and processed
                            let planned = resize.outputSize(for: image.size)
                            var result = try resize.applied(to: image)
                            if planned.pixelCount <= 20_000 {
                                result = try result.rendered()  // libvips must also compute it
                            }

                            // Then the plan is exactly the result
                            #expect(planned == result.size, "\(resize.identifier) on \(image.size)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 8 * 48 * 5 * 2)
    }

    // MARK: Cover position

    @Test func coverPositionChoosesWhichSideIsKept() throws {
        // Given a 400×200 image, red on the left half and blue on the right
        let image = try Fixtures.redLeftBlueRight(width: 400, height: 200)

        // When it is covered into 100×100 (scaled to 200×100) with east, west or centre
        let east = try resize(["width": 100, "height": 100, "position": "east"]).applied(to: image)
        let west = try resize(["width": 100, "height": 100, "position": "west"]).applied(to: image)
        let centre = try resize(["width": 100, "height": 100, "position": "center"]).applied(to: image)

        // Then east keeps blue, west keeps red, and centre straddles the middle
        #expect(east.size == ImageSize(width: 100, height: 100))
        #expect(Fixtures.isClose(try east.pixel(x: 50, y: 50), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try east.pixel(x: 95, y: 50), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try west.pixel(x: 5, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try west.pixel(x: 50, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try centre.pixel(x: 10, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(Fixtures.isClose(try centre.pixel(x: 90, y: 50), [0, 0, 255], tolerance: Fixtures.lossyTolerance))
    }

    @Test func coverWithAnOddSpareKeepsTheRowsSharpKeeps() throws {
        // Given a 10×11 image whose rows are distinct values (row y is y × 20)
        let odd = try Fixtures.image(width: 10, height: 11, bands: 3) { _, y in [UInt8(y * 20), 0, 0] }
        let even = try Fixtures.image(width: 10, height: 12, bands: 3) { _, y in [UInt8(y * 20), 0, 0] }

        // When each is covered into 10×10: no resampling, one or two spare rows
        let box = try resize(["width": 10, "height": 10, "fit": "cover"])
        let oddResult = try box.applied(to: odd)
        let evenResult = try box.applied(to: even)

        // Then the odd spare row is dropped from the top, as sharp does ((spare + 1) / 2), and an
        // even spare is split evenly
        #expect(oddResult.size == ImageSize(width: 10, height: 10))
        #expect(try oddResult.pixel(x: 0, y: 0) == [20, 0, 0])
        #expect(try oddResult.pixel(x: 0, y: 9) == [200, 0, 0])
        #expect(try evenResult.pixel(x: 0, y: 0) == [20, 0, 0])
        #expect(try evenResult.pixel(x: 0, y: 9) == [200, 0, 0])
    }

    @Test func coverAttentionKeepsTheDetailedPartOverAFlatOne() throws {
        // Given a 400×200 image: flat grey except for a detailed right quarter
        let image = try Fixtures.flatWithDetail(width: 400, height: 200, detailed: 300..<400)

        // When it is covered into 50×100 (scaled to 200×100) with attention
        let result = try resize(["width": 50, "height": 100, "position": "attention"]).applied(to: image)

        // Then the crop holds the detail, not the flat grey
        #expect(result.size == ImageSize(width: 50, height: 100))
        #expect(try Fixtures.isMostlyDetailed(result))
    }

    // MARK: Contain

    @Test func containLetterboxesOnTheBackgroundColour() throws {
        // Given a red 200×100 image
        let image = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.red)

        // When it is contained in 100×100 on green
        let result = try resize(["width": 100, "height": 100, "fit": "contain", "background": "#00ff00"]).applied(to: image)

        // Then the image (100×50) is centred and the bars above and below are green
        #expect(result.size == ImageSize(width: 100, height: 100))
        #expect(result.bands == 3)
        #expect(try result.pixel(x: 50, y: 5) == [0, 255, 0])
        #expect(try result.pixel(x: 50, y: 95) == [0, 255, 0])
        #expect(Fixtures.isClose(try result.pixel(x: 50, y: 50), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
    }

    @Test func containPositionPlacesTheImageInTheBox() throws {
        // Given a red 200×100 image
        let image = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.red)

        // When it is contained in 100×100 at the north
        let result = try resize([
            "width": 100, "height": 100, "fit": "contain", "position": "north", "background": "#00ff00",
        ]).applied(to: image)

        // Then the image touches the top and the bar is below it
        #expect(Fixtures.isClose(try result.pixel(x: 50, y: 5), [255, 0, 0], tolerance: Fixtures.lossyTolerance))
        #expect(try result.pixel(x: 50, y: 60) == [0, 255, 0])
    }

    @Test func containWithATranslucentBackgroundAddsAnAlphaBand() throws {
        // Given a red RGB image without alpha
        let image = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.red)

        // When it is contained on a half-transparent blue
        let result = try resize(["width": 100, "height": 100, "fit": "contain", "background": "#0000ff80"]).applied(to: image)

        // Then the result has alpha: translucent blue bars around an opaque image
        #expect(result.bands == 4)
        #expect(result.hasAlpha)
        #expect(try result.pixel(x: 50, y: 5) == [0, 0, 255, 128])
        #expect(Fixtures.isClose(try result.pixel(x: 50, y: 50), [255, 0, 0, 255], tolerance: Fixtures.lossyTolerance))
    }

    // MARK: Pixels

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

    // MARK: Planning

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

    @Test func framesCroppedBySmartGravityOrLetterboxedAreLeftToBeMadeOneByOne() throws {
        let frames = try Fixtures.image(width: 60, height: 40 * 3, bands: 3) { x, y in [UInt8(x), UInt8(y), 0] }.withPageHeight(40)
        let context = ProcessingContext(input: "anim.gif", output: "o", originalSize: ImageSize(width: 60, height: 40))
        for options in [
            ["width": 30, "height": 30, "fit": "cover", "position": "attention"], ["width": 30, "height": 30, "fit": "contain"],
        ] as [[String: any Sendable]] {
            #expect(try resize(options).processFrames(frames, context: context) == nil)
        }
    }
}
