public import PipelineKit
public import Vips

/// Removes the edges of an image that are similar to a background colour, as sharp's `trim`.
///
/// A pixel belongs to the edge when every colour band is within `threshold` of `background`
/// (by default the top-left pixel's colour); libvips' `find_trim` first takes a 3×3 median, so
/// isolated specks in the border do not stop the trim. In an image with alpha the colour is
/// judged flattened onto the background, and a border that matches the background's alpha is
/// trimmed too (the box holds whatever either test keeps, as in sharp). An image that would be
/// trimmed to nothing, one colour throughout, is returned unchanged, and so is an image
/// narrower or shorter than 3 pixels, which the median cannot cover (sharp fails on those).
///
/// The result's size depends on the pixels, so `outputSize(for:)` can only answer the input's
/// size, an upper bound: the planner then sizes decoding as if nothing were trimmed, and
/// `allowedInputShrink(for:)` stays 1.
public struct Trim: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "trim"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Removes edges similar to a background colour (default: the top-left pixel's)."

    /// In 8-bit units; 255 or more treats every colour as background.
    public static let thresholdRange = 0.0...255.0

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .colour("background", help: "The colour of the edges to remove; without it, the colour of the top-left pixel."),
        .number(
            "threshold", in: thresholdRange, default: 10,
            help: "How far (0–255, scaled for 16-bit images) a band may differ from the background and still be trimmed."),
    ]

    /// The edge colour as red, green, blue and alpha, 0–255, or nil for the top-left pixel's.
    public let background: [Double]?
    /// How far a band may differ from the background and still be trimmed (0–255, scaled for 16-bit images).
    public let threshold: Double

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(background: options.optionalColour("background"), threshold: options.double("threshold"))
    }

    /// A trim for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter background: red, green, blue and optionally alpha, 0–255; nil for the colour
    ///   of the image's top-left pixel.
    public init(background: [Double]? = nil, threshold: Double = 10) throws(OptionError) {
        if let background {
            guard background.count == 3 || background.count == 4, background.allSatisfy({ (0...255).contains($0) }) else {
                throw OptionError(option: "background", "expected 3 or 4 components between 0 and 255")
            }
        }
        guard Self.thresholdRange.contains(threshold) else {
            throw OptionError(
                option: "threshold", "must be between \(Self.thresholdRange.lowerBound) and \(Self.thresholdRange.upperBound)")
        }
        self.background = background.map { $0.count == 3 ? $0 + [255] : $0 }
        self.threshold = threshold
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        "trim(background:\(background.map(hexColour) ?? "top-left"),threshold:\(threshold))"
    }

    /// The input's size: how much is trimmed is only known from the pixels (see the type's notes).
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        guard image.width >= 3, image.height >= 3 else { return image }
        guard let box = try contentBox(of: image, edge: edgeValues(of: image)), box.size != image.size else { return image }
        return try image.extracted(left: box.left, top: box.top, width: box.size.width, height: box.size.height)
    }

    /// Every frame of an animation cut to one window, the box of what any frame shows, with the
    /// first frame's edge colour: each trimmed alone would be cut about its own content, and a
    /// sprite moving across the frames would stand still.
    public func processFrames(_ frames: VipsImage, context: ProcessingContext) throws -> VipsImage? {
        let frameHeight = frames.pageHeight
        let count = frames.height / max(frameHeight, 1)
        guard count > 1, frames.width >= 3, frameHeight >= 3 else { return nil }
        let frameSize = ImageSize(width: frames.width, height: frameHeight)
        let pages = try frames.pages()
        let edge = try edgeValues(of: pages[0])
        var window: Box?
        for page in pages {
            guard let box = try contentBox(of: page, edge: edge) else { continue }
            window = window.map { $0.union(box) } ?? box
            if window?.size == frameSize { return frames }
        }
        guard let window, window.size != frameSize else { return frames }
        return try VipsImage.joiningPages(
            pages.map { page throws(VipsError) in
                try page.extracted(left: window.left, top: window.top, width: window.size.width, height: window.size.height)
            })
    }

    /// The edge colour in `image`'s bands: `background`'s, or its top-left pixel's.
    private func edgeValues(of image: VipsImage) throws(VipsError) -> [Double] {
        if let background { return image.bandValues(of: background) }
        return try image.pixel(x: 0, y: 0)
    }

    /// The box of `image` that is not edge (of colour `edge`, in its bands), or nil when all of it is.
    private func contentBox(of image: VipsImage, edge: [Double]) throws(VipsError) -> Box? {
        let unit: Double = image.bandFormat == .ushort ? 257 : 1
        let threshold = threshold * unit
        var box = try Self.box(in: image, background: image.hasAlpha ? Array(edge.dropLast()) : edge, threshold: threshold)
        if image.hasAlpha, let alphaBackground = edge.last {
            let alpha = try image.applying("extract_band", ["band": .integer(image.bands - 1)])
            if let alphaBox = try Self.box(in: alpha, background: [alphaBackground], threshold: threshold) {
                box = box.map { $0.union(alphaBox) } ?? alphaBox
            }
        }
        return box
    }

    /// The rectangle of `image` that is not background, or nil when all of it is.
    private static func box(in image: VipsImage, background: [Double], threshold: Double) throws(VipsError) -> Box? {
        let found = try Vips.call(
            "find_trim",
            [
                "in": .image(image), "background": .numbers(background), "threshold": .number(threshold),
            ])
        func integer(_ name: String) throws(VipsError) -> Int {
            guard let value = found[name]?.number else {
                throw VipsError(operation: "find_trim", message: "find_trim gave no \(name)")
            }
            return Int(value)
        }
        let box = try Box(left: integer("left"), top: integer("top"), size: ImageSize(width: integer("width"), height: integer("height")))
        return box.size.width > 0 && box.size.height > 0 ? box : nil
    }

    private struct Box {
        var left: Int
        var top: Int
        var size: ImageSize

        func union(_ other: Box) -> Box {
            let left = min(left, other.left)
            let top = min(top, other.top)
            let right = max(self.left + size.width, other.left + other.size.width)
            let bottom = max(self.top + size.height, other.top + other.size.height)
            return Box(left: left, top: top, size: ImageSize(width: right - left, height: bottom - top))
        }
    }
}
