public import PipelineKit
public import Vips

/// Blurs an image with a Gaussian kernel; the size does not change.
public struct Blur: ImageProcessing, Hashable {
    public static let name = "blur"
    public static let summary = "Blurs with a Gaussian of the given sigma (in pixels)."

    public static let sigmaRange = 0.1...1000.0

    public static let options: [Option] = [
        .number("sigma", in: sigmaRange, required: true, help: "Standard deviation of the Gaussian, in pixels."),
    ]

    /// The Gaussian's standard deviation, in pixels.
    public let sigma: Double

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

    public var identifier: String { "blur(sigma:\(sigma))" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try image.withPremultipliedAlpha { premultiplied throws(VipsError) in
            try premultiplied.gaussianBlurred(sigma: sigma)
        }
    }
}
