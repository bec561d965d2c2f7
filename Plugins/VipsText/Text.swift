public import PipelineKit
public import Vips

/// Draws text over each image (a caption, a credit, a watermark) through libvips' `text`
/// operation, which lays it out with Pango.
///
/// The text is plain: it is escaped before Pango sees it, so `<b>` shows as written. The font is
/// a fontconfig family that must be installed; a missing one is an error when the pipeline is
/// checked, never a silently substituted font, and so is a text longer or taller than Pango
/// draws (32,767 pixels a side). The size is in pixels (Pango's points at 72 dpi). The text
/// sits where `gravity` says, its lines aligned toward that side, `margin` pixels in from the
/// edges it touches (when wider or taller than the image, its lines broken at word breaks if
/// that lets it be drawn larger and it is not turned, and scaled down to fit), or with `tile`
/// repeats in a grid over the whole image,
/// `margin` pixels apart (with `rotate`, a diagonal watermark). The image keeps its size; like
/// the colour steps, the output is 8-bit sRGB, or 8-bit greyscale for a greyscale input under
/// a grey text, alpha kept. An animation gets the text on every frame.
public struct Text: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "text"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary =
        "Draws plain text (an installed font, a colour, an opacity) at a compass point inside a margin, rotated, or tiled over the whole image as a watermark."

    /// Compass points only, as `composite` takes them.
    public static let gravities = Gravity.names.filter { Gravity(name: $0)?.interest == nil }

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        Option(
            "text", .string(nonEmpty: true), required: true,
            help: "The text, drawn as written: markup such as <b> is shown, not interpreted. A newline starts another line."),
        Option(
            "font", .string(nonEmpty: true), default: JSONNode(plain: "DejaVu Sans"),
            help:
                "One fontconfig family name, as `fc-list : family` lists them (a line with commas lists one font's several "
                + "names; give one); one that is not installed is an error."),
        .number("size", in: 1...10_000, default: 24, help: "The font size in pixels (points at 72 dpi)."),
        .boolean("bold", default: false, help: "Draw the text in the family's bold face (a bolder one drawn by Pango when it has none)."),
        .colour("color", default: "#ffffff", help: "The text's colour; an alpha component multiplies opacity."),
        .number("opacity", in: 0...1, default: 1, help: "How opaque the text is, 0 (invisible) to 1."),
        .choice(
            "gravity", gravities, default: "southeast",
            help:
                "Where the text sits, its lines aligned toward that side (when it is wider or taller than the image, its lines "
                + "are broken at word breaks if that lets it be drawn larger, unless it is turned, and it is scaled down to fit; "
                + "a text that would be drawn over 4 times the image's area and over 16.8 million pixels, or whose longest line "
                + "at its size would pass 32767 pixels, is refused as a mistake); ignored with tile."),
        .integer(
            "margin", in: 0...100_000, default: 16,
            help:
                "Pixels between the text and the edges it sits against, narrowed where the image leaves less room beside the "
                + "text (a margin wider than the image centres it); with tile, between neighbouring copies."),
        .number(
            "rotate", in: -360...360, default: 0,
            help: "Degrees to turn the text, counter-clockwise when negative (-30 is a rising diagonal)."),
        .boolean("tile", default: false, help: "Repeat the text in a grid over the whole image, as a watermark."),
    ]

    /// The text, drawn as written.
    public let text: String
    /// The fontconfig family.
    public let font: String
    /// The font size in pixels.
    public let size: Double
    /// Whether the text is drawn in the family's bold face.
    public let bold: Bool
    /// Red, green, blue and alpha, 0–255.
    public let color: [Double]
    /// How opaque the text is, 0 to 1.
    public let opacity: Double
    /// Where the text sits when not tiled.
    public let gravity: Gravity
    /// Pixels from the edges, or between tiles.
    public let margin: Int
    /// Degrees the text is turned.
    public let rotate: Double
    /// Whether the text repeats over the whole image.
    public let tile: Bool
    /// About how large the text is drawn, unturned: measured once, when the step is made.
    public let drawnSize: ImageSize

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        let gravityName = try options.string("gravity")
        guard let gravity = Gravity(name: gravityName) else {
            throw OptionError(option: "gravity", "unknown value \(gravityName.quotedValue)")
        }
        try self.init(
            text: options.string("text"), font: options.string("font"), size: options.double("size"), bold: options.bool("bold"),
            color: options.colour("color"), opacity: options.double("opacity"), gravity: gravity,
            margin: options.int("margin"), rotate: options.double("rotate"), tile: options.bool("tile"))
    }

    /// A text step for use from Swift; checks what the pipeline file's validator would, the
    /// font's presence included.
    public init(
        text: String, font: String = "DejaVu Sans", size: Double = 24, bold: Bool = false, color: [Double] = [255, 255, 255, 255],
        opacity: Double = 1, gravity: Gravity = .southeast, margin: Int = 16, rotate: Double = 0, tile: Bool = false
    ) throws(OptionError) {
        guard !text.isEmpty else { throw OptionError(option: "text", "must not be empty") }
        // Pango breaks lines at these and spaces a tab; any other control it draws as a box.
        if let control = text.unicodeScalars.first(where: {
            $0.properties.generalCategory == .control && !"\n\r\t".unicodeScalars.contains($0)
        }) {
            throw OptionError(
                option: "text",
                "has the control character U+\(String(format: "%04X", control.value)), which would be drawn as a box: "
                    + "a text may hold newlines and tabs, no other control character")
        }
        guard (1...10_000).contains(size) else { throw OptionError(option: "size", "must be between 1 and 10000") }
        guard color.count == 3 || color.count == 4, color.allSatisfy({ (0...255).contains($0) }) else {
            throw OptionError(option: "color", "expected 3 or 4 components between 0 and 255")
        }
        guard (0...1).contains(opacity) else { throw OptionError(option: "opacity", "must be between 0 and 1") }
        guard margin >= 0 else { throw OptionError(option: "margin", "must not be negative") }
        guard (-360...360).contains(rotate) else { throw OptionError(option: "rotate", "must be between -360 and 360") }
        try FontCatalogue.requireInstalled(font)
        try FontCatalogue.requireGlyphs(for: text, family: font)
        drawnSize = try Self.measure(text, face: Self.face(font, bold: bold), size: size, aligned: Self.lineAlignment(gravity, tiled: tile))
        self.text = text
        self.font = font
        self.size = size
        self.bold = bold
        self.color = color.count == 3 ? color + [255] : color
        self.opacity = opacity
        self.gravity = gravity
        self.margin = margin
        self.rotate = rotate
        self.tile = tile
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        let colour = color.map { String(Int($0.rounded())) }.joined(separator: ",")
        return
            "text(text:\(text.quotedValue),font:\(font.quotedValue),size:\(size)\(bold ? ",bold:true" : ""),color:\(colour),opacity:\(opacity),gravity:\(gravity.rawValue),margin:\(margin),rotate:\(rotate),tile:\(tile))"
    }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let base = try image.inEightBits().holdingColour(color)
        let strength = opacity * color[3] / 255
        guard strength > 0 else { return base }
        var mask = try renderedMask(for: base.size, maxPixels: context.maxPixels)
        if strength < 1 { mask = try mask.applying("linear", ["a": .number(strength), "b": .number(0)]).roundedToEightBits() }
        let coverage = try tile ? tiled(mask, over: base) : placed(mask, on: base)
        // The text's colour in the base's shape, the base's alpha raised to opaque under the text.
        var ink = Array(color.prefix(3))
        if base.colourBands == 1 { ink = [try VipsImage.sRGBColour(ink, in: .blackAndWhite)[0]] }
        if base.hasAlpha { ink.append(255) }
        let inkImage = try coverage.applying("linear", ["a": .numbers(ink.map { _ in 0 }), "b": .numbers(ink)]).cast(to: .uchar)
        guard base.hasAlpha else {
            return try Self.blend(inkImage, over: base, by: coverage).cast(to: .uchar).labelled(as: base.interpretation)
        }
        // Over, as `composite` draws: blended with the base's colour weighted by its alpha, so
        // that the hidden colour of a transparent pixel does not tint the text's soft edges.
        let blended = try Self.blend(inkImage, over: base.applying("premultiply"), by: coverage)
        return try blended.applying("unpremultiply").roundedToEightBits().labelled(as: base.interpretation)
    }

    /// `ink` where `coverage` is 255, `base` where it is 0, and between them in proportion.
    private static func blend(_ ink: VipsImage, over base: VipsImage, by coverage: VipsImage) throws(VipsError) -> VipsImage {
        let blended = try Vips.call(
            "ifthenelse", ["cond": .image(coverage), "in1": .image(ink), "in2": .image(base), "blend": .boolean(true)])["out"]?.image
        guard let blended else { throw VipsError(operation: "ifthenelse", message: "gave no image") }
        return blended
    }

    /// The text as a one-band 8-bit mask, 255 where it is fully inked, turned by `rotate`.
    ///
    /// Pango draws the whole text, however little of it lands on the image: one whose drawing
    /// would be far larger than `image` fails the item (`TextTooLarge`) before libvips is asked
    /// for the memory.
    func renderedMask(for image: ImageSize, maxPixels: Int) throws -> VipsImage {
        let allowed = min(maxPixels, max(Self.largestTextBesideImage * image.pixelCount, Self.textPixelsAlwaysAllowed))
        guard drawnSize.pixelCount <= allowed else {
            throw TextTooLarge(size: size, text: drawnSize, image: image, maxPixels: maxPixels)
        }
        var mask = try Self.drawing(text, face: face, size: size, aligned: lineAlignment)
        if !tile, rotate.truncatingRemainder(dividingBy: 360) == 0, let wrapped = try wrappedToFit(mask, on: image) {
            mask = wrapped
        }
        if rotate.truncatingRemainder(dividingBy: 360) != 0 {
            mask = try mask.applying("rotate", ["angle": .number(rotate)])
        }
        return mask
    }

    /// How many times the image's area a text's drawing may cover: a text that would sit
    /// mostly outside the image is a mistake, not a choice.
    static let largestTextBesideImage = 4
    /// A drawing of this many pixels (a megabyte each million) is allowed beside any image, so
    /// that a caption on a small thumbnail never meets the bound above.
    static let textPixelsAlwaysAllowed = 1 << 24
    /// The longest side Cairo, under Pango, draws.
    static let longestSide = 32_767

    /// About how large `text` is drawn at `size`: a drawing at a small size, scaled. The small
    /// size keeps the measure cheap, and within what Cairo draws for glyphs up to two ems wide;
    /// from a pixel up, Pango's extents scale with the size to within a few percent, and from
    /// 32 pixels to within a pixel or two a line.
    static func measure(_ text: String, face: String, size: Double, aligned alignment: String = "low") throws(OptionError) -> ImageSize {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let longestLine = lines.map(\.count).max() ?? 1
        let probeSize = min(size, 32, max(1, 16000 / Double(max(longestLine, lines.count))))
        let probe: VipsImage
        func tooLarge(_ drawn: String, wide: Bool) -> OptionError {
            // Newlines shorten a line, and lengthen a text already too tall.
            let remedy = wide ? "shorter lines, or newlines" : "fewer lines"
            return OptionError(
                option: "size",
                "the text at size \(JSONNode(plain: size).jsonText) would be drawn \(drawn) pixels, and Pango draws at most "
                    + "\(longestSide) a side: give a smaller size, or \(remedy)")
        }
        do {
            probe = try drawing(text, face: face, size: probeSize, aligned: alignment)
        } catch {
            // A probe made smaller for a long text is too large for Cairo even so: at its own
            // size the text is larger still. (A character is about half as wide as a line is tall.)
            if probeSize < min(size, 32) {
                throw tooLarge("over \(longestSide)", wide: longestLine >= 2 * lines.count)
            }
            throw OptionError(option: "text", "cannot be drawn: \(error.message)")
        }
        func scaled(_ side: Int) -> Int { Int((Double(side) * size / probeSize).rounded(.up)) }
        let drawn = ImageSize(width: scaled(probe.width), height: scaled(probe.height))
        guard max(drawn.width, drawn.height) <= longestSide else { throw tooLarge("about \(drawn)", wide: drawn.width > longestSide) }
        return drawn
    }

    /// How the lines of a text of several are aligned (libvips' `align`): toward the side of the
    /// image the text is placed at, so that a credit at the bottom right ends every line at the
    /// margin; centred at the centre, the top and the bottom, and when tiled.
    var lineAlignment: String { Self.lineAlignment(gravity, tiled: tile) }

    /// `lineAlignment` of a text at `gravity`, `tiled` or not.
    static func lineAlignment(_ gravity: Gravity, tiled: Bool) -> String {
        guard !tiled else { return "centre" }
        switch gravity {
        case .east, .northeast, .southeast: return "high"
        case .west, .northwest, .southwest: return "low"
        default: return "centre"
        }
    }

    /// The step's face, as `face(_:bold:)` names it.
    var face: String { Self.face(font, bold: bold) }

    /// The start of a Pango font description for `family`, bold or not. The comma ends Pango's
    /// family list, so every word of the family is the family's (a "Bold" in its name is not
    /// taken for a weight), and only what follows it is a style.
    static func face(_ family: String, bold: Bool) -> String { "\(family)," + (bold ? " Bold" : "") }

    /// `text`, unturned, as Pango draws it in `face` at `size` pixels, its lines `aligned`
    /// (`low`, `centre` or `high`) and broken at word breaks to at most `width` pixels when a
    /// width is given.
    private static func drawing(
        _ text: String, face: String, size: Double, aligned alignment: String = "low", wrappingAt width: Int? = nil
    ) throws(VipsError) -> VipsImage {
        // At 72 dpi a point is a pixel.
        let description = "\(face) \(size)"
        // Pango mirrors the alignment of a right-to-left paragraph: asked mirrored, it is the one meant.
        let mirrored = ["low": "high", "high": "low"][alignment] ?? alignment
        var arguments: [String: VipsValue] = [
            "text": .string(escaped(text)), "font": .string(description), "dpi": .integer(72),
            "align": .string(startsRightToLeft(text) ? mirrored : alignment),
        ]
        if let width { arguments["width"] = .integer(width) }
        guard let mask = try Vips.call("text", arguments)["out"]?.image else {
            throw VipsError(operation: "text", message: "gave no image")
        }
        return mask
    }

    /// Whether the first letter of `text` is of a script written right to left (Hebrew, Arabic,
    /// Syriac, Thaana…), which makes Pango set the text right to left.
    static func startsRightToLeft(_ text: String) -> Bool {
        guard let letter = text.unicodeScalars.first(where: \.properties.isAlphabetic) else { return false }
        let rightToLeft: [ClosedRange<UInt32>] = [0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF]
        return rightToLeft.contains { $0.contains(letter.value) }
    }

    /// `drawn` with its lines broken at word breaks, when it must be scaled down to fit
    /// `image` and the broken lines fit at a larger size: a sentence across a photo becomes a
    /// paragraph that can be read, not one line scaled to a sliver. Nil when the text fits,
    /// or fits larger as it is (a credit a little too wide for a thumbnail).
    private func wrappedToFit(_ drawn: VipsImage, on image: ImageSize) throws(VipsError) -> VipsImage? {
        guard drawn.width > image.width || drawn.height > image.height else { return nil }
        let room = self.room(on: image)
        let (width, height) = (Double(drawn.width), Double(drawn.height))
        let asDrawn = min(room.width / width, room.height / height)
        // Lines as wide as the room, when about that many fit down it at this size, as a
        // paragraph would be set; otherwise lines W wide, which make a block about W by
        // (width / W) × height, of the room's shape.
        let linesAcross = (width / room.width).rounded(.up)
        let fitsAtSize = linesAcross * height <= room.height
        let lineWidth = fitsAtSize ? Int(room.width) : Int((width * height * room.width / room.height).squareRoot())
        guard lineWidth < drawn.width else { return nil }
        let wrapped = try Self.drawing(text, face: face, size: size, aligned: lineAlignment, wrappingAt: max(1, lineWidth))
        let fitted = min(room.width / Double(wrapped.width), room.height / Double(wrapped.height))
        return fitted > asDrawn ? wrapped : nil
    }

    /// The room a text placed on `image` is scaled down to fit: inside the margin where that
    /// leaves half the image or more, and a pixel at least (half of a 1-pixel side is none).
    private func room(on image: ImageSize) -> (width: Double, height: Double) {
        func side(_ length: Int) -> Double { Double(max(length - 2 * margin, length / 2, 1)) }
        return (side(image.width), side(image.height))
    }

    /// The mask in a black image of the base's size, where gravity and margin put it.
    private func placed(_ drawn: VipsImage, on base: VipsImage) throws(VipsError) -> VipsImage {
        // A text wider or taller than its room inside the margins (a credit on a thumbnail) is
        // scaled down to fit it rather than cut at the image's edges or crowding them: scaled
        // only past the image, a text a little smaller than the image would keep its size and
        // lose its margin, and be drawn larger than a text asked for at a larger size.
        var mask = drawn
        let room = room(on: base.size)
        if Double(mask.width) > room.width || Double(mask.height) > room.height {
            let scale = min(room.width / Double(mask.width), room.height / Double(mask.height))
            // Each side a pixel at least: a long line on a 1-pixel strip would have a side of none.
            mask = try mask.resized(
                horizontalScale: max(scale, 1 / Double(mask.width)), verticalScale: max(scale, 1 / Double(mask.height)),
                kernel: .lanczos3)
        }
        // A margin wider than the room beside the text (a small image, a long caption) is
        // narrowed to that room, so the text stays whole on the image rather than the item failing.
        let marginX = min(margin, max(0, (base.width - mask.width) / 2))
        let marginY = min(margin, max(0, (base.height - mask.height) / 2))
        let inner = (width: base.width - 2 * marginX, height: base.height - 2 * marginY)
        let origin = gravity.origin(of: (mask.width, mask.height), in: inner)
        return try mask.embedded(
            x: origin.left + marginX, y: origin.top + marginY, width: base.width, height: base.height, background: [0])
    }

    /// The mask repeated, `margin` apart, over the base, one copy centred on it as a watermark
    /// is: an image smaller than a copy and its margin still shows the text.
    private func tiled(_ mask: VipsImage, over base: VipsImage) throws(VipsError) -> VipsImage {
        let cell = try mask.embedded(
            x: margin / 2, y: margin / 2, width: mask.width + margin, height: mask.height + margin, background: [0])
        // An odd count each way puts the middle cell, and the copy in it, on the image's centre.
        let across = (base.width / cell.width + 2) | 1, down = (base.height / cell.height + 2) | 1
        let grid = try cell.applying("replicate", ["across": .integer(across), "down": .integer(down)])
        let origin = Gravity.centre.origin(of: (base.width, base.height), in: (grid.width, grid.height))
        return try grid.extracted(left: origin.left, top: origin.top, width: base.width, height: base.height)
    }

    /// `text` with Pango's markup characters as entities, so that it is drawn as written.
    static func escaped(_ text: String) -> String {
        text.htmlEscaped
    }
}

/// A text that would be drawn far larger than the image it goes on (most of it outside), or
/// larger than the run allows (`decompress.maxPixels`); the item fails before it is drawn.
public struct TextTooLarge: Error, Sendable, Equatable, CustomStringConvertible {
    /// The step's font size in pixels.
    public let size: Double
    /// About how large the text would be drawn.
    public let text: ImageSize
    /// The image the text goes on.
    public let image: ImageSize
    /// The run's `decompress.maxPixels`.
    public let maxPixels: Int

    /// The message the item fails with, naming both sizes and what to change.
    public var description: String {
        let bound =
            text.pixelCount > maxPixels
            ? "larger than decompress.maxPixels (\(maxPixels)) allows"
            : "more than \(Text.largestTextBesideImage) times the \(image) image, most of it outside"
        return
            "text at size \(JSONNode(plain: size).jsonText) would be drawn about \(text) pixels, \(bound); give a smaller size or a shorter text"
    }
}
