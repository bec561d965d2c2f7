public import PipelineKit
public import Vips

/// Stretches contrast as sharp's `normalise` does: the lightness (CIE L\*) at the `lower`
/// percentile becomes black and the one at the `upper` percentile white, linearly in between,
/// with chroma kept; lightness beyond the two is clipped. Alpha is kept unchanged, and the
/// output is 8-bit of the input's kind (sRGB or greyscale). An image whose lightness spans
/// less than one L\* unit between the percentiles (a flat colour) is left as it is.
public struct Normalise: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "normalise"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Stretches lightness so the lower percentile becomes black and the upper white; also spelled normalize."

    /// The percentiles `lower` may be; below `upperRange`'s top, so that a range is left.
    public static let lowerRange = 0.0...99.0
    /// The percentiles `upper` may be.
    public static let upperRange = 1.0...100.0

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .number("lower", in: lowerRange, default: 1, help: "Percentile of lightness that becomes black; 0 takes the darkest pixel."),
        .number(
            "upper", in: upperRange, default: 99,
            help: "Percentile of lightness that becomes white; 100 takes the lightest pixel. Must exceed lower."),
    ]

    /// The percentile that becomes black.
    public let lower: Double
    /// The percentile that becomes white.
    public let upper: Double

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(lower: options.double("lower"), upper: options.double("upper"))
    }

    /// A normalisation for use from Swift; checks what the pipeline file's validator would.
    public init(lower: Double = 1, upper: Double = 99) throws(OptionError) {
        try OptionChecks.check("lower", lower, in: Self.lowerRange)
        try OptionChecks.check("upper", upper, in: Self.upperRange)
        guard lower < upper else {
            throw OptionError(option: "upper", "must be greater than lower (\(lower.plainText))")
        }
        self.lower = lower
        self.upper = upper
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "normalise(lower:\(lower),upper:\(upper))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let input = try image.inEightBits()
        let kind = input.interpretation
        return try input.withAlphaSetAside { colour throws(VipsError) in
            let lab = try colour.converted(to: .lab)
            let lightness = try lab.extractingBands(0)
            // Percentiles come from a histogram, so measure L* (0–100) in 256 steps, not 101.
            let steps = try lightness.applying("linear", ["a": .number(2.55), "b": .number(0)]).roundedToEightBits()
            let black = try Self.value(of: steps, atPercentile: lower) / 2.55
            let white = try Self.value(of: steps, atPercentile: upper) / 2.55
            guard white - black >= 1 else { return colour }
            let scale = 100 / (white - black)
            return
                try lightness
                .applying("linear", ["a": .number(scale), "b": .number(-black * scale)])
                .joiningBands(lab.extractingBands(1, count: 2))
                .labelled(as: .lab)
                .converted(to: kind)
                .roundedToEightBits()
        }
    }

    /// The value below which `percentile` per cent of the pixels of a one-band 8-bit image lie;
    /// 0 and 100 are its minimum and maximum.
    private static func value(of image: VipsImage, atPercentile percentile: Double) throws(VipsError) -> Double {
        let result: Double?
        switch percentile {
        case 0: result = try Vips.call("min", ["in": .image(image)])["out"]?.number
        case 100: result = try Vips.call("max", ["in": .image(image)])["out"]?.number
        default: result = try Vips.call("percent", ["in": .image(image), "percent": .number(percentile)])["threshold"]?.number
        }
        guard let result else { throw VipsError(operation: "percent", message: "percent gave no threshold") }
        return result
    }
}

/// `normalize`: the American spelling of `normalise`, as sharp accepts both. It does exactly
/// what `normalise` does and shares its identifier, so the cache treats them as one step.
public struct Normalize: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "normalize"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Alternative spelling of normalise."
    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = Normalise.options

    /// The `normalise` step this one is, under its other name.
    public let normalise: Normalise

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        normalise = try Normalise(options: options)
    }

    /// A normalisation for use from Swift; checks what the pipeline file's validator would.
    public init(lower: Double = 1, upper: Double = 99) throws(OptionError) {
        normalise = try Normalise(lower: lower, upper: upper)
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { normalise.identifier }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try normalise.process(image, context: context)
    }
}
