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
    public static let name = "greyscale"
    public static let summary = "Converts to 8-bit greyscale (one band, plus alpha if any); also spelled grayscale."
    public static let options: [Option] = []

    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A greyscale conversion for use from Swift.
    public init() {}

    public var identifier: String { "greyscale" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let input = try image.inEightBits()
        if input.interpretation == .blackAndWhite { return input }
        return try input.converted(to: .blackAndWhite).roundedToEightBits()
    }
}

/// `grayscale`: the American spelling of `greyscale`, as sharp accepts both. It does exactly
/// what `greyscale` does and shares its identifier, so the cache treats them as one step.
public struct Grayscale: ImageProcessing, Hashable {
    public static let name = "grayscale"
    public static let summary = "Alternative spelling of greyscale."
    public static let options: [Option] = []

    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A greyscale conversion for use from Swift.
    public init() {}

    public var identifier: String { Greyscale().identifier }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try Greyscale().process(image, context: context)
    }
}
