public import PipelineKit
public import Vips

/// Rotates an image clockwise by `angle` degrees, as sharp's `rotate(angle)` does.
///
/// The angle is taken mod 360 (-90 and 270 are the same turn, so are 450 and 90). A multiple of
/// 90° moves pixels without resampling, so it is exact and lossless. Any other angle resamples
/// (bilinear) onto a canvas just large enough for the turned image, and fills its corners with
/// `background`; a translucent background gives an image without alpha an alpha band.
public struct Rotate: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "rotate"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Rotates clockwise by an angle in degrees: multiples of 90 exactly, others onto a background."

    /// libvips' own limit for an angle; the angle is normalised mod 360 before use anyway.
    public static let angleRange = -10_000_000.0...10_000_000.0

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .number(
            "angle", in: angleRange, required: true,
            help: "Degrees clockwise, taken mod 360 (negative turns anticlockwise). Multiples of 90 are exact; other angles resample."),
        .colour(
            "background", default: "#000000",
            help: "Fills the corners uncovered by an angle that is not a multiple of 90; a colour with alpha gives the image an alpha band."
        ),
    ]

    /// The angle in degrees clockwise, normalised to 0..<360.
    public let angle: Double
    /// The corner colour as red, green, blue and alpha, 0–255.
    public let background: [Double]

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(angle: options.double("angle"), background: options.colour("background"))
    }

    /// A rotation for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter background: red, green, blue and optionally alpha, 0–255.
    public init(angle: Double, background: [Double] = [0, 0, 0, 255]) throws(OptionError) {
        guard Self.angleRange.contains(angle) else {
            throw OptionError(option: "angle", "must be between \(Self.angleRange.lowerBound) and \(Self.angleRange.upperBound)")
        }
        guard background.count == 3 || background.count == 4, background.allSatisfy({ (0...255).contains($0) }) else {
            throw OptionError(option: "background", "expected 3 or 4 components between 0 and 255")
        }
        self.angle = VipsImage.normalisedDegrees(angle)
        self.background = background.count == 3 ? background + [255] : background
    }

    /// The exact turn, or nil when the angle is not a multiple of 90.
    public var quarterTurn: VipsImage.QuarterTurn? { VipsImage.QuarterTurn(degrees: angle) }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        // No corner is uncovered by an exact turn: the background cannot tell two of them apart.
        if let quarterTurn { return "rotate(angle:\(quarterTurn.rawValue))" }
        return "rotate(angle:\(angle),background:\(hexColour(background)))"
    }

    /// The size this step makes from an input of `size`, so that planning can size decoding.
    public func outputSize(for size: ImageSize) -> ImageSize {
        switch quarterTurn {
        case .none?, .half?:
            return size
        case .clockwise?, .anticlockwise?:
            return ImageSize(width: size.height, height: size.width)
        case nil:
            let rotated = VipsImage.rotatedSize(of: (size.width, size.height), degrees: angle)
            return ImageSize(width: rotated.width, height: rotated.height)
        }
    }

    /// The point turned with the picture about its centre.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        point.turned(clockwise: angle, from: input, to: result)
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        if let quarterTurn { return try image.rotated(by: quarterTurn) }
        try checkLimits(outputSize(for: image.size), input: image.size, maxPixels: context.maxPixels)
        let (prepared, fill) = try image.preparedForFill(with: background)
        guard prepared.hasAlpha else { return try prepared.rotated(degrees: angle, background: fill) }
        // libvips' rotate premultiplies an image with alpha itself, so that the colour of
        // transparent pixels does not bleed into their neighbours, and takes the fill as
        // premultiplied colour: premultiplied here too, the image's colour would be twice.
        let alpha = fill[fill.count - 1]
        let opaque: Double = prepared.bandFormat == .ushort ? 65535 : 255
        return try prepared.rotated(degrees: angle, background: fill.dropLast().map { $0 * alpha / opaque } + [alpha])
    }
}
