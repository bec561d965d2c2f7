import Foundation
import PipelineKit
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import VipsText

@Suite("Text")
struct TextTests {
    /// An image large enough for any text these tests draw.
    private static let anyImage = ImageSize(width: 4000, height: 4000)

    /// The box holding every pixel of band 0 brighter than 0, as (left, top, right, bottom) exclusive.
    private func inkBox(_ image: VipsImage) throws -> (left: Int, top: Int, right: Int, bottom: Int) {
        let found = try Vips.call(
            "find_trim", ["in": .image(image.extractingBands(0)), "background": .numbers([0]), "threshold": .number(0)])
        func value(_ key: String) -> Int { Int(found[key]?.number ?? -1) }
        return (value("left"), value("top"), value("left") + value("width"), value("top") + value("height"))
    }

    private func brightest(_ image: VipsImage) throws -> Double {
        try Vips.call("max", ["in": .image(image.extractingBands(0))])["out"]?.number ?? -1
    }

    /// Problems the validator finds in a pipeline whose one output has `step`.
    private func problems(_ step: String) throws -> [PipelineFileError.Problem] {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [#"{"name": "o", "steps": [\#(step)], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#])
        do {
            _ = try PipelineHarness.pipeline(json, in: directory)
            return []
        } catch let error as PipelineFileError {
            return error.problems
        }
    }

    @Test func southeastTextSitsInTheBottomRightCornerInsideTheMargin() throws {
        // Given a black 300×200 image
        let base = try Fixtures.solid(width: 300, height: 200, colour: [0, 0, 0])

        // When white text is drawn southeast with a 12-pixel margin
        let step = try Text(text: "Hello", size: 24, gravity: .southeast, margin: 12)
        let result = try step.applied(to: base)

        // Then every changed pixel is in the bottom-right region, within the margin, and near it
        #expect(result.size == base.size && result.bands == 3)
        let box = try inkBox(result)
        #expect(box.left > 150 && box.top > 100, "\(box)")
        #expect(box.right <= 300 - 12 && box.bottom <= 200 - 12, "\(box)")
        #expect(box.right > 300 - 12 - 8 && box.bottom > 200 - 12 - 12, "\(box)")
        #expect(try brightest(result) == 255)

        // And northwest puts it in the top-left corner instead
        let northwest = try inkBox(try Text(text: "Hello", gravity: .northwest, margin: 12).applied(to: base))
        #expect(northwest.left >= 12 && northwest.top >= 12 && northwest.right < 150 && northwest.bottom < 100, "\(northwest)")
    }

    /// A text of several lines has them aligned toward the side it is placed at: a credit at the
    /// bottom right ends its short line at the margin too.
    /// So does one written right to left, which Pango would align mirrored.
    @Test(arguments: [
        (Gravity.southeast, "right", "Photo: A Long Photographer Name\n© 2026"),
        (.northwest, "left", "Photo: A Long Photographer Name\n© 2026"),
        (.south, "centre", "Photo: A Long Photographer Name\n© 2026"), (.southeast, "right", "צילום: שם ארוך של צלם\nכל הזכויות"),
        (.southwest, "left", "تصوير: اسم مصور طويل جدا\nالحقوق"),
    ])
    func linesAreAlignedTowardTheSideTheTextSitsAt(gravity: Gravity, side: String, text: String) throws {
        let base = try Fixtures.solid(width: 800, height: 600, colour: [0, 0, 0])
        let result = try Text(text: text, size: 30, gravity: gravity, margin: 16).applied(to: base)
        let whole = try inkBox(result)
        // The second line alone: the rows below the first line's
        let lineHeight = (whole.bottom - whole.top) / 2
        let second = try inkBox(
            result.extracted(left: 0, top: whole.top + lineHeight + 4, width: 800, height: whole.bottom - whole.top - lineHeight - 4))
        let (leftGap, rightGap) = (second.left - whole.left, whole.right - second.right)
        switch side {
        case "right": #expect(rightGap < 4 && leftGap > 100, "\(whole) \(second)")
        case "left": #expect(leftGap < 4 && rightGap > 100, "\(whole) \(second)")
        default: #expect(abs(leftGap - rightGap) < 6 && leftGap > 50, "\(whole) \(second)")
        }
    }

    @Test func opacityAndColourAreThoseAsked() throws {
        let base = try Fixtures.solid(width: 200, height: 80, colour: [0, 0, 0])
        let half = try Text(text: "Hello", size: 40, opacity: 0.5).applied(to: base)
        #expect(abs(try brightest(half) - 128) <= 2)
        let red = try Text(text: "Hello", size: 40, color: [255, 0, 0]).applied(to: base)
        let box = try inkBox(red)
        #expect(box.right > box.left)
        #expect(try Vips.call("max", ["in": .image(red.extractingBands(1))])["out"]?.number == 0)
        #expect(try brightest(red) == 255)
    }

    @Test func tileCoversTheWholeImage() throws {
        let base = try Fixtures.solid(width: 400, height: 300, colour: [0, 0, 0])
        let step = try Text(text: "DRAFT", size: 20, margin: 30, rotate: -30, tile: true)
        let result = try step.applied(to: base)
        // Every quarter of the image has text in it, and the text reaches near every edge
        for (left, top) in [(0, 0), (200, 0), (0, 150), (200, 150)] {
            let quarter = try result.extracted(left: left, top: top, width: 200, height: 150)
            #expect(try brightest(quarter) > 200, "quarter at \(left), \(top)")
        }
        let box = try inkBox(result)
        #expect(box.left < 40 && box.top < 40 && box.right > 360 && box.bottom > 260, "\(box)")
    }

    @Test func aTiledTextWhoseCopyAndMarginOutgrowTheImageStillShowsACopyOnItsCentre() throws {
        // Given a 160×120 image, smaller than one turned copy of the text with its margin
        let base = try Fixtures.solid(width: 160, height: 120, colour: [0, 0, 0])
        let step = try Text(text: "PROOF", size: 48, margin: 100, rotate: -30, tile: true)
        let mask = try step.renderedMask(for: base.size, maxPixels: .max)
        #expect(mask.width + 100 > base.width && mask.height + 100 > base.height, "\(mask.size)")

        // When it is tiled over the image
        let result = try step.applied(to: base)

        // Then the text is drawn, around the image's centre
        #expect(try brightest(result) == 255)
        let box = try inkBox(result)
        #expect(box.left < 80 && box.right > 80 && box.top < 60 && box.bottom > 60, "\(box)")
    }

    @Test func markupInTheTextIsShownNotInterpreted() throws {
        // Interpreted, "<b>x</b>" would be one bold x; shown, it is eight characters as wide as
        // the same characters Pango is given as entities.
        let step = try Text(text: "<b>x</b>", size: 30)
        let shown = try step.renderedMask(for: Self.anyImage, maxPixels: .max)
        let literal = try Vips.call(
            "text", ["text": .string("&lt;b&gt;x&lt;/b&gt;"), "font": .string("DejaVu Sans, 30"), "dpi": .integer(72)])["out"]?.image
        let x = try Text(text: "x", size: 30).renderedMask(for: Self.anyImage, maxPixels: .max)
        #expect(shown.width == literal?.width && shown.height == literal?.height)
        #expect(shown.width > 4 * x.width)
        // An ampersand alone, invalid markup, is drawn too
        #expect(try Text(text: "Fish & chips 'n' \"peas\"", size: 20).renderedMask(for: Self.anyImage, maxPixels: .max).width > 100)
    }

    @Test(arguments: [("Hello, world", 100.0), ("Hello, world", 517.5), ("Two lines\nof text, gjpqy", 260.0)])
    func theExtentFromASmallDrawingIsTheFullDrawings(text: String, size: Double) throws {
        let step = try Text(text: text, size: size)
        let full = try step.renderedMask(for: Self.anyImage, maxPixels: .max)
        let extent = step.drawnSize
        // Scaled from a drawing at a smaller size, each side is within a pixel a line of the real one
        #expect(abs(extent.width - full.width) <= max(2, full.width / 100), "\(extent) for \(full.size)")
        #expect(abs(extent.height - full.height) <= max(2, full.height / 100), "\(extent) for \(full.size)")
    }

    @Test func aTextDrawnFarLargerThanTheImageFailsTheItemBeforeItIsDrawn() throws {
        // Twenty-five lines at 1,000 pixels would be drawn far taller than the 1000×800 image
        let lines = Array(repeating: "A caption line", count: 25).joined(separator: "\n")
        let step = try Text(text: lines, size: 1000)
        let base = try Fixtures.solid(width: 1000, height: 800, colour: [0, 0, 0])
        do {
            _ = try step.applied(to: base)
            Issue.record("a text of \(step.drawnSize) was drawn on a 1000×800 image")
        } catch let error as TextTooLarge {
            #expect(error.image == base.size && error.text.height > 25_000, "\(error)")
            #expect("\(error)".hasPrefix("text at size 1000 would be drawn about "), "\(error)")
            #expect("\(error)".contains("more than 4 times the 1000×800 image, most of it outside"), "\(error)")
        }

        // Three of the lines are drawn on an image of 6000×1000, though the drawing is larger
        // than the image and larger than a drawing always allowed
        let three = try Text(text: lines.split(separator: "\n").prefix(3).joined(separator: "\n"), size: 1000)
        let drawn = try three.renderedMask(for: ImageSize(width: 6000, height: 1000), maxPixels: .max)
        #expect(drawn.size.pixelCount > max(6_000_000, Text.textPixelsAlwaysAllowed), "\(drawn.size)")

        // and one beyond decompress.maxPixels is refused by that bound, named
        let wide = try Text(text: "A caption line", size: 1000)
        let tooMany = try #require(throws: TextTooLarge.self) {
            try wide.renderedMask(for: ImageSize(width: 3000, height: 1000), maxPixels: 1_000_000)
        }
        #expect("\(tooMany)".contains("larger than decompress.maxPixels (1000000) allows"), "\(tooMany)")

        // A caption on a small thumbnail is never refused, though longer than the thumbnail is wide
        let caption = try Text(text: "Photograph by a very careful photographer, all rights reserved", size: 40)
        #expect(try caption.renderedMask(for: ImageSize(width: 160, height: 120), maxPixels: .max).width > 160)
    }

    @Test func aTextLongerThanPangoDrawsIsAnErrorWhenThePipelineIsChecked() throws {
        // 3,000 characters on one line at 300 pixels: about 500,000 pixels wide
        let wide = try problems(#"{"text": {"text": "\#(String(repeating: "x", count: 3000))", "size": 300}}"#)
        #expect(wide.count == 1)
        #expect(wide.first?.path == "outputs[0].steps[0].text.size", "\(wide)")
        #expect(wide.first?.message.contains("Pango draws at most 32767 a side: give a smaller size, or shorter lines") == true, "\(wide)")
        // 3,000 lines at 24 pixels: about 80,000 pixels tall
        let tall = try problems(#"{"text": {"text": "\#(Array(repeating: "line", count: 3000).joined(separator: "\\n"))"}}"#)
        #expect(tall.first?.path == "outputs[0].steps[0].text.size", "\(tall)")
        // and told to have fewer lines, not to add newlines
        #expect(tall.first?.message.contains("give a smaller size, or fewer lines") == true, "\(tall)")
        // Texts too large for Cairo even when measured small are said so, not in Cairo's words
        let longest = try problems(#"{"text": {"text": "\#(String(repeating: "word ", count: 12_000))"}}"#)
        #expect(longest.first?.path == "outputs[0].steps[0].text.size", "\(longest)")
        #expect(longest.first?.message.contains("would be drawn over 32767 pixels") == true, "\(longest)")
        #expect(longest.first?.message.contains("shorter lines, or newlines") == true, "\(longest)")
        let tallest = try problems(#"{"text": {"text": "\#(Array(repeating: "line", count: 12_000).joined(separator: "\\n"))"}}"#)
        #expect(tallest.first?.message.contains("or fewer lines") == true, "\(tallest)")
        // The same characters as lines short enough are taken
        let lines = stride(from: 0, to: 3000, by: 100).map { _ in String(repeating: "x", count: 100) }.joined(separator: "\\n")
        #expect(try problems(#"{"text": {"text": "\#(lines)", "size": 10}}"#).isEmpty)
    }

    @Test func alphaGreyscaleAndSixteenBitImagesKeepTheirShape() throws {
        // A transparent image: the text is opaque where drawn and the rest stays transparent
        let clear = try Fixtures.image(width: 200, height: 80, bands: 4) { _, _ in [0, 0, 0, 0] }
        let onClear = try Text(text: "Hello", size: 40, gravity: .centre).applied(to: clear)
        #expect(onClear.bands == 4)
        #expect(try Vips.call("max", ["in": .image(onClear.extractingBands(3))])["out"]?.number == 255)
        #expect(try onClear.pixel(x: 0, y: 0) == [0, 0, 0, 0])

        // Greyscale stays one band
        let grey = try Fixtures.solid(width: 200, height: 80, colour: [0, 0, 0]).converted(to: .blackAndWhite)
        let onGrey = try Text(text: "Hello", size: 40).applied(to: grey)
        let greyBrightest = try brightest(onGrey)
        #expect(onGrey.bands == 1 && greyBrightest == 255)

        // 16-bit comes out 8-bit, as from the colour steps, with the text on it
        let deep = try Fixtures.solid(width: 200, height: 80, colour: [0, 0, 0]).converted(to: .rgb16)
        let onDeep = try Text(text: "Hello", size: 40).applied(to: deep)
        let deepBrightest = try brightest(onDeep)
        #expect(onDeep.bandFormat == .uchar && onDeep.bands == 3 && deepBrightest == 255)
    }

    @Test(arguments: [[UInt8(0), 0, 0, 0], [255, 0, 0, 0]])
    func textOverTransparentPixelsHasItsOwnColourAtItsSoftEdges(hidden: [UInt8]) throws {
        // Given a transparent image whose hidden colour is black or red, as editors save them
        let clear = try Fixtures.image(width: 200, height: 80, bands: 4) { _, _ in hidden }
        // When white text is drawn on it
        let drawn = try Text(text: "Logo", size: 48, gravity: .centre).applied(to: clear)
        // Then its soft edges are white, partly transparent, as `composite` draws over
        let bytes = try drawn.bytes()
        var edges = 0
        var tinted = 0
        for offset in stride(from: 0, to: bytes.count, by: 4) where bytes[offset + 3] > 0 {
            if bytes[offset + 3] < 255 { edges += 1 }
            if bytes[offset..<offset + 3].contains(where: { $0 != 255 }) { tinted += 1 }
        }
        #expect(edges > 100, "the text has no soft edges: the test proves nothing")
        #expect(tinted == 0, "\(tinted) of the text's pixels are not white")
        #expect(try drawn.pixel(x: 0, y: 0)[3] == 0)
    }

    @Test func colourTextOnAGreyscaleImageKeepsItsColour() throws {
        // Given a one-band mid-grey image and red text
        let grey = try Fixtures.solid(width: 200, height: 80, colour: [128, 128, 128]).converted(to: .blackAndWhite)
        let drawn = try Text(text: "Hello", size: 40, color: [255, 0, 0, 255], gravity: .centre).applied(to: grey)
        // Then the image is colour, the text red where fully inked, the rest grey
        #expect(drawn.bands == 3 && drawn.interpretation == .sRGB)
        let reddest = try Vips.call("max", ["in": .image(drawn.extractingBands(0))])["out"]?.number
        let greenest = try Vips.call("min", ["in": .image(drawn.extractingBands(1))])["out"]?.number
        #expect(reddest == 255 && greenest == 0)
        #expect(try drawn.pixel(x: 0, y: 0) == [128, 128, 128])
    }

    @Test func aFontThatIsNotInstalledIsAnErrorWhenThePipelineIsChecked() throws {
        let found = try problems(#"{"text": {"text": "Hi", "font": "No Such Font Family Xyzzy"}}"#)
        #expect(found.count == 1)
        let message = found.map { "\($0.path): \($0.message)" }.joined()
        #expect(message.contains("outputs[0].steps[0].text.font") && message.contains("No Such Font Family Xyzzy"), "\(message)")
        #expect(try problems(#"{"text": {"text": "Hi", "font": "dejavu sans"}}"#).isEmpty)
        #expect(try problems(#"{"text": {"text": "Hi"}}"#).isEmpty)
    }

    @Test func aCharacterNoInstalledFontHasIsAnErrorWhenThePipelineIsChecked() throws {
        // U+10FFFD is a private-use character no font draws; the rest are in DejaVu
        let found = try problems(#"{"text": {"text": "Caf\u00e9 \u2713 \udbff\udffd!\udbff\udffd\n\u200d\ufe0f"}}"#)
        let message = found.map { "\($0.path): \($0.message)" }.joined()
        #expect(found.count == 1, "\(message)")
        #expect(
            message.hasPrefix(
                #"outputs[0].steps[0].text.text: no installed font has "\#u{10FFFD}" (U+10FFFD): each would be drawn as a box"#),
            "\(message)")
        #expect(message.contains("fc-list ':charset=10fffd'"), "\(message)")
        #expect(try problems(#"{"text": {"text": "Caf\u00e9 \u2713\n\u200d\ufe0f"}}"#).isEmpty)
    }

    @Test func aControlCharacterOtherThanALineBreakOrATabIsAnErrorWhenThePipelineIsChecked() throws {
        let found = try problems(#"{"text": {"text": "a\u0007b"}}"#)
        let message = found.map { "\($0.path): \($0.message)" }.joined()
        #expect(
            message == "outputs[0].steps[0].text.text: has the control character U+0007, which would be drawn as a box: "
                + "a text may hold newlines and tabs, no other control character", "\(message)")
        #expect(try problems(#"{"text": {"text": "one\r\ntwo\tthree\nfour"}}"#).isEmpty)
    }

    @Test func aMarginWiderThanTheRoomBesideTheTextIsNarrowedToIt() throws {
        // Given a small black image, and text asked for 100,000 pixels from its corner
        let base = try Fixtures.solid(width: 120, height: 60, colour: [0, 0, 0])
        let result = try Text(text: "Hi", size: 20, gravity: .southeast, margin: 100_000).applied(to: base)
        // Then the text is drawn, whole and centred, as near the corner as the image allows
        let box = try inkBox(result)
        #expect(result.size == base.size)
        #expect(box.left > 20 && box.right < 100 && box.top > 5 && box.bottom < 55, "\(box)")
        // And a margin that fits is kept
        let fitting = try inkBox(try Text(text: "Hi", size: 20, gravity: .southeast, margin: 4).applied(to: base))
        #expect(fitting.right <= 116 && fitting.right > 100, "\(fitting)")
    }

    @Test func aTextWiderThanTheImageIsScaledDownToFitInsideItsMargin() throws {
        // Given a credit line drawn far wider than a 60×40 thumbnail
        let base = try Fixtures.solid(width: 60, height: 40, colour: [0, 0, 0])
        let step = try Text(text: "A very long copyright notice", size: 30, gravity: .southeast, margin: 4)
        #expect(step.drawnSize.width > 3 * base.width)
        // When it is drawn
        let result = try step.applied(to: base)
        // Then it is whole on the image, inside the margin, not cut at the edges (in lines, as
        // they fit it larger than one)
        let box = try inkBox(result)
        #expect(result.size == base.size)
        #expect(box.left >= 4 && box.right <= 56 && box.right > 50, "\(box)")
        #expect(box.bottom <= 36, "\(box)")
    }

    /// A text that fits the image but not inside its margins is scaled down into them, as a
    /// larger one is: it keeps its margin, and is never drawn larger than a text asked larger.
    @Test func aTextThatFitsTheImageButNotItsMarginsIsScaledIntoThem() throws {
        let base = try Fixtures.solid(width: 300, height: 200, colour: [0, 0, 0])
        var boxes: [Int: (left: Int, top: Int, right: Int, bottom: Int)] = [:]
        for size in [40.0, 60, 100] {
            let step = try Text(text: "hello 123 hello", size: size, gravity: .southeast, margin: 16)
            boxes[Int(size)] = try inkBox(try step.applied(to: base))
        }
        let sixty = try #require(boxes[60]), hundred = try #require(boxes[100])
        #expect(try Text(text: "hello 123 hello", size: 60).drawnSize.width > 300 - 32)
        for (size, box) in boxes {
            #expect(box.left >= 16 && box.top >= 16 && box.right <= 284 && box.bottom <= 184, "size \(size): \(box)")
        }
        #expect(sixty.right - sixty.left <= hundred.right - hundred.left, "60: \(sixty), 100: \(hundred)")
    }

    /// A tracking pixel or a 1-pixel strip: half of a side of 1 is none, which a room must not be.
    @Test(arguments: [(1, 1), (200, 1), (1, 200), (2, 2)]) func aTextOnAnImageOfAPixelOrTwoIsScaledDownToIt(width: Int, height: Int) throws
    {
        let base = try Fixtures.solid(width: width, height: height, colour: [0, 0, 0])
        for margin in [0, 1, 16] {
            let result = try Text(text: "© Example", size: 16, gravity: .southeast, margin: margin).applied(to: base)
            #expect(result.size == base.size, "margin \(margin)")
            #expect(try brightest(result) > 0, "margin \(margin): no ink on the image")
        }
    }

    @Test func aSentenceTooWideForTheImageIsBrokenIntoLinesThatCanBeRead() throws {
        // Given a caption of 40 words at 32 pixels, drawn as one line over 20 times as wide as
        // an 800×600 image
        let base = try Fixtures.solid(width: 800, height: 600, colour: [0, 0, 0])
        let caption = Array(repeating: "the quick brown fox", count: 10).joined(separator: " ")
        let step = try Text(text: caption, size: 32, gravity: .southwest)
        #expect(step.drawnSize.width > 4 * base.width)
        // When it is drawn
        let result = try step.applied(to: base)
        // Then it is a block of lines inside the margin, tall enough to read (one line scaled
        // to fit would be 2 or 3 rows tall), not cut at the edges
        let box = try inkBox(result)
        #expect(box.left >= 16 && box.right <= 784 && box.bottom <= 584, "\(box)")
        #expect(box.bottom - box.top > 100 && box.right - box.left > 400, "\(box)")
    }

    /// `bold` draws the family's bold face: more ink for the same words, a little wider. A
    /// text without it keeps the identifier it had, so what it made is not made again.
    @Test func boldDrawsTheBoldFace() throws {
        #expect(try problems(#"{"text": {"text": "Hello", "bold": true}}"#).isEmpty)
        let base = try Fixtures.solid(width: 300, height: 100, colour: [0, 0, 0])
        let regular = try Text(text: "Hello", size: 40, gravity: .centre)
        let bold = try Text(text: "Hello", size: 40, bold: true, gravity: .centre)
        func ink(_ step: Text) throws -> Double {
            try Vips.call("avg", ["in": .image(try step.applied(to: base).extractingBands(0))])["out"]?.number ?? 0
        }
        let (boldInk, regularInk) = (try ink(bold), try ink(regular))
        #expect(boldInk > 1.2 * regularInk, "bold \(boldInk), regular \(regularInk)")
        #expect(bold.drawnSize.width > regular.drawnSize.width, "\(bold.drawnSize) \(regular.drawnSize)")
        #expect(!regular.identifier.contains("bold") && bold.identifier.contains(",bold:true,"), "\(bold.identifier)")
    }

    @Test func theWatermarkExamplePipelineLoads() throws {
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/watermark.json")
        let pipeline = try Pipeline(contentsOf: file, processors: .standard)
        #expect(pipeline.definition.outputs.count == 2)
    }
}
