public import PipelineKit
public import Vips

/// Converts to 8-bit greyscale: one band of luminance, plus the alpha band if there is one,
/// which is kept unchanged. sharp's `greyscale`, except that sharp writes three identical
/// bands unless told `toColourspace('b-w')`; here the output is the single band.
///
/// Every encoder takes the one-band image: JPEG, WebP, PNG and the rest write greyscale files,
/// so an sRGB output's encode settings need no change. The grey level is libvips' conversion to
/// `b-w`, as sharp's: luminance in linear light (libvips 8.14 weighs red, green and blue 0.2,
/// 0.7 and 0.1), encoded again with the sRGB curve, so a grey pixel keeps its value.
public struct Greyscale: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "greyscale"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Converts to 8-bit greyscale (one band, plus alpha if any); also spelled grayscale."
    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = []

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A greyscale conversion for use from Swift.
    public init() {}

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "greyscale" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let input = try image.inEightBits()
        if input.interpretation == .blackAndWhite { return input }
        return try input.converted(to: .blackAndWhite).roundedToEightBits()
    }
}

/// `grayscale`: the American spelling of `greyscale`, as sharp accepts both. It does exactly
/// what `greyscale` does and shares its identifier, so the cache treats them as one step.
public struct Grayscale: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "grayscale"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Alternative spelling of greyscale."
    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = []

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A greyscale conversion for use from Swift.
    public init() {}

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { Greyscale().identifier }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try Greyscale().process(image, context: context)
    }
}
