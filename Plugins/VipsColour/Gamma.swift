public import PipelineKit
public import Vips

/// Gamma correction as a step: every colour value v (0–1) becomes v^(1/gamma), so a `gamma`
/// above 1 lightens the mid-tones (2.2 takes mid-grey 128 to 186) and one below 1 darkens them
/// (1/2.2 ≈ 0.45 takes 128 to 56); black and white never move, and alpha is kept unchanged.
///
/// This is the meaning libvips' `gamma` and ImageMagick's `-gamma` give the word. sharp's
/// `gamma(gamma, gammaOut)` is a different thing: a pair of curves around its own resize, so
/// that the resize works on nearly linear light. A step has no resize inside it; to resize in
/// linear light here, put `resize` between `{"gamma": {"gamma": 0.4545}}` and
/// `{"gamma": {"gamma": 2.2}}`.
public struct Gamma: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "gamma"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary =
        "Gamma correction: colour v (0–1) becomes v^(1/gamma); above 1 lightens mid-tones, below 1 darkens; alpha unchanged."

    /// The exponents `gamma` may be: beyond them the mid-tones go to black or white.
    public static let gammaRange = 0.1...10.0

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .number(
            "gamma", in: gammaRange, default: 2.2,
            help: "Colour values (0–1) are raised to 1/gamma: above 1 lightens the mid-tones, below 1 darkens them.")
    ]

    /// Colour values (0–1) are raised to `1 / gamma`.
    public let gamma: Double

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(gamma: options.double("gamma"))
    }

    /// A gamma step for use from Swift; checks what the pipeline file's validator would.
    public init(gamma: Double = 2.2) throws(OptionError) {
        try OptionChecks.check("gamma", gamma, in: Self.gammaRange)
        self.gamma = gamma
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "gamma(gamma:\(gamma))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        if gamma == 1 { return image }
        // libvips' gamma computes 255 × (v / 255) ^ (1 / exponent) through a lookup table.
        return try image.inEightBits().withAlphaSetAside { colour throws(VipsError) in
            try colour.applying("gamma", ["exponent": .number(gamma)]).roundedToEightBits()
        }
    }
}
