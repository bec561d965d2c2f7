public import PipelineKit
public import Vips

/// Inverts the image as sharp's `negate` does: every colour value v becomes 255 − v. Alpha is
/// kept unless `alpha` is true (sharp inverts alpha by default; here keeping it is the default,
/// as in every other colour step).
public struct Negate: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "negate"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Inverts colour (255 − value); alpha too when alpha is true."

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .boolean("alpha", default: false, help: "Also invert the alpha band (transparent becomes opaque). By default alpha is kept.")
    ]

    /// Whether the alpha band is inverted too.
    public let alpha: Bool

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        self.init(alpha: try options.bool("alpha"))
    }

    /// A negation for use from Swift.
    public init(alpha: Bool = false) {
        self.alpha = alpha
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "negate(alpha:\(alpha))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let input = try image.inEightBits()
        if alpha { return try input.applying("invert") }
        return try input.withAlphaSetAside { colour throws(VipsError) in try colour.applying("invert") }
    }
}
