public import PipelineKit
public import Vips

/// Adds pixels to the edges of an image, as sharp's `extend`: `top`, `right`, `bottom` and
/// `left` pixels, made as `extendWith` says.
///
/// - `background`: filled with `background`; a translucent colour gives an image without alpha
///   an alpha band, so the border stays translucent;
/// - `copy`: the nearest edge pixel, repeated outwards;
/// - `repeat`: the image, tiled;
/// - `mirror`: the image, reflected at its edges.
public struct Extend: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "extend"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary =
        "Adds a border: top, right, bottom, left pixels of background colour, or copied, repeated or mirrored edges."

    /// How the new pixels are made.
    public typealias Mode = VipsImage.Extend

    /// Border widths up to libvips' own coordinate limit, `VIPS_MAX_COORD`.
    public static let sideRange = 0...10_000_000

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .integer("top", in: sideRange, default: 0, help: "Pixels to add above the image."),
        .integer("right", in: sideRange, default: 0, help: "Pixels to add right of the image."),
        .integer("bottom", in: sideRange, default: 0, help: "Pixels to add below the image."),
        .integer("left", in: sideRange, default: 0, help: "Pixels to add left of the image."),
        .choice(
            "extendWith", Mode.self, default: .background,
            help:
                "How to make the new pixels: background (the colour), copy (the nearest edge pixel), repeat (tile the image), mirror (reflect it)."
        ),
        .colour(
            "background", default: "#000000",
            help: "The border colour when extendWith is background; a colour with alpha gives the image an alpha band."),
    ]

    /// Pixels added above the image.
    public let top: Int
    /// Pixels added right of the image.
    public let right: Int
    /// Pixels added below the image.
    public let bottom: Int
    /// Pixels added left of the image.
    public let left: Int
    /// How the new pixels are made: the background colour, or the image's edges copied, repeated or mirrored.
    public let extendWith: Mode
    /// The border colour as red, green, blue and alpha, 0–255 (used by `.background` only).
    public let background: [Double]

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(
            top: options.int("top"),
            right: options.int("right"),
            bottom: options.int("bottom"),
            left: options.int("left"),
            extendWith: options.choice("extendWith", as: Mode.self),
            background: options.colour("background")
        )
    }

    /// An extend for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter background: red, green, blue and optionally alpha, 0–255.
    public init(
        top: Int = 0, right: Int = 0, bottom: Int = 0, left: Int = 0,
        extendWith: Mode = .background, background: [Double] = [0, 0, 0, 255]
    ) throws(OptionError) {
        for (name, value) in [("top", top), ("right", right), ("bottom", bottom), ("left", left)] {
            guard Self.sideRange.contains(value) else {
                throw OptionError(option: name, "must be between \(Self.sideRange.lowerBound) and \(Self.sideRange.upperBound)")
            }
        }
        guard top > 0 || right > 0 || bottom > 0 || left > 0 else {
            throw OptionError(option: nil, "extend needs at least one of top, right, bottom or left above 0")
        }
        guard background.count == 3 || background.count == 4, background.allSatisfy({ (0...255).contains($0) }) else {
            throw OptionError(option: "background", "expected 3 or 4 components between 0 and 255")
        }
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
        self.extendWith = extendWith
        self.background = background.count == 3 ? background + [255] : background
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        let sides = "extend(top:\(top),right:\(right),bottom:\(bottom),left:\(left),extendWith:\(extendWith.rawValue)"
        // The colour only shows with a background border.
        return extendWith == .background ? sides + ",background:\(hexColour(background)))" : sides + ")"
    }

    /// The size this step makes from an input of `size`, so that planning can size decoding.
    public func outputSize(for size: ImageSize) -> ImageSize {
        ImageSize(width: size.width + left + right, height: size.height + top + bottom)
    }

    /// The point where the picture is placed on the larger canvas.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        point.seen(through: PixelBox(left: -left, top: -top, width: result.width, height: result.height), of: input)
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let size = outputSize(for: image.size)
        try checkLimits(size, input: image.size, maxPixels: context.maxPixels)
        guard extendWith == .background else {
            return try image.embedded(x: left, y: top, width: size.width, height: size.height, extend: extendWith)
        }
        let (prepared, fill) = try image.preparedForFill(with: background)
        return try prepared.embedded(x: left, y: top, width: size.width, height: size.height, extend: .background, background: fill)
    }
}
