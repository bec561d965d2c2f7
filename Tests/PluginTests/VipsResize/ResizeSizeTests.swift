import PipelineKit
import TestSupport
import Testing
import Vips
import VipsResize

/// The resize step's sizes: each fit mode, one side alone, and withoutEnlargement.
@Suite("Resize: sizes")
struct ResizeSizeTests: ResizeStepMaking {
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
}
