public import PipelineKit
public import Vips

/// sharp's `gamma` as a step of its own: every colour band becomes
/// `255 × (value / 255) ^ (gamma / gammaOut)`; alpha is kept unchanged.
///
/// sharp decodes by `gamma` before resizing (value^gamma, darker) and encodes by `gammaOut`
/// after it (^(1/gammaOut), lighter), so the resize works on nearly linear light. A step has
/// nothing between the two, so they make this one curve: with `gammaOut` equal to `gamma` (the
/// default) the image is unchanged; a `gamma` above `gammaOut` darkens the mid-tones (2.2 over
/// 1 takes mid-grey 128 to 56), one below lightens them (1 over 2.2 takes 128 to 186). Black and
/// white never move. To resize in linear light, put `resize` between two `gamma` steps
/// (`{"gamma": 2.2, "gammaOut": 1}` then `{"gamma": 1, "gammaOut": 2.2}`).
public struct Gamma: ImageProcessing, Hashable {
    public static let name = "gamma"
    public static let summary = "Raises colour to the power gamma / gammaOut (sharp's decode-then-encode pair); alpha unchanged."

    public static let gammaRange = 1.0...3.0

    public static let options: [Option] = [
        .number("gamma", in: gammaRange, default: 2.2, help: "The decoding exponent: values are raised to this power (darker)."),
        .number("gammaOut", in: gammaRange, help: "The encoding exponent: values are then raised to 1/gammaOut (lighter). Defaults to gamma, which leaves the image unchanged."),
    ]

    public let gamma: Double
    public let gammaOut: Double

    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(gamma: options.double("gamma"), gammaOut: options.optionalDouble("gammaOut"))
    }

    /// A gamma step for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter gammaOut: the encoding exponent; nil means `gamma`.
    public init(gamma: Double = 2.2, gammaOut: Double? = nil) throws(OptionError) {
        try OptionChecks.check("gamma", gamma, in: Self.gammaRange)
        if let gammaOut { try OptionChecks.check("gammaOut", gammaOut, in: Self.gammaRange) }
        self.gamma = gamma
        self.gammaOut = gammaOut ?? gamma
    }

    /// The power each colour value (0–1) is raised to.
    public var exponent: Double { gamma / gammaOut }

    public var identifier: String { "gamma(gamma:\(gamma),gammaOut:\(gammaOut))" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        if exponent == 1 { return image }
        // libvips' gamma computes 255 × (v / 255) ^ (1 / exponent) through a lookup table; one
        // table for the combined curve rounds once, where sharp's two passes round twice.
        return try image.inEightBits().withAlphaSetAside { colour throws(VipsError) in
            try colour.applying("gamma", ["exponent": .number(1 / exponent)]).roundedToEightBits()
        }
    }
}
