public import PipelineKit
public import Vips

/// Removes the alpha band by compositing the image over a background colour, as sharp's
/// `flatten`; an image without alpha is left as it is.
///
/// The background's own alpha is ignored: the result is opaque. A greyscale image stays
/// greyscale over a grey background, and becomes colour over any other.
public struct Flatten: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "flatten"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Removes alpha by compositing over a background colour (default black)."

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .colour("background", default: "#000000", help: "The colour transparent pixels show; its alpha is ignored (the result is opaque).")
    ]

    /// The background as red, green, blue and alpha, 0–255; alpha is not used.
    public let background: [Double]

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(background: options.colour("background"))
    }

    /// A flatten for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter background: red, green, blue and optionally alpha, 0–255.
    public init(background: [Double] = [0, 0, 0, 255]) throws(OptionError) {
        self.background = try OptionChecks.colour("background", background)
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "flatten(background:\(OptionChecks.hex(Array(background.prefix(3)))))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        guard image.hasAlpha else { return image }
        return try image.inEightBits().flattened(ontoSRGB: background).roundedToEightBits()
    }
}
