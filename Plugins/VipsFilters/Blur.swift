public import PipelineKit
public import Vips

/// Blurs an image with a Gaussian kernel; the size does not change.
public struct Blur: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "blur"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Blurs with a Gaussian of the given sigma (in pixels)."

    /// The sigmas, in pixels, `sigma` may be: below them the Gaussian changes nothing visible.
    public static let sigmaRange = 0.1...1000.0

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .number("sigma", in: sigmaRange, required: true, help: "Standard deviation of the Gaussian, in pixels.")
    ]

    /// The Gaussian's standard deviation, in pixels.
    public let sigma: Double

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(sigma: options.double("sigma"))
    }

    /// A blur for use from Swift; checks what the pipeline file's validator would.
    public init(sigma: Double) throws(OptionError) {
        guard Self.sigmaRange.contains(sigma) else {
            throw OptionError(option: "sigma", "must be between \(Self.sigmaRange.lowerBound) and \(Self.sigmaRange.upperBound)")
        }
        self.sigma = sigma
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "blur(sigma:\(sigma))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try image.withPremultipliedAlpha { premultiplied throws(VipsError) in
            try premultiplied.gaussianBlurred(sigma: sigma)
        }
    }
}
