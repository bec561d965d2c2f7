public import PipelineKit
public import Vips

/// Stretches contrast as sharp's `normalise` does: the lightness (CIE L\*) at the `lower`
/// percentile becomes black and the one at the `upper` percentile white, linearly in between,
/// with chroma kept; lightness beyond the two is clipped. Pixels count by how opaque they are,
/// so a clear surround counts for nothing. Alpha is kept unchanged, and the output is 8-bit of
/// the input's kind (sRGB or greyscale). An image whose lightness spans less than one L\* unit
/// between the percentiles (a flat colour), or that shows nothing, is left as it is.
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
        .number(
            "lower", in: lowerRange, default: 1,
            help:
                "Percentile of lightness that becomes black; 0 takes the darkest pixel. Pixels count by how opaque they are: a clear surround is not the darkest part."
        ),
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
        let alpha = input.hasAlpha ? try input.extractingBands(input.bands - 1) : nil
        return try input.withAlphaSetAside { colour throws(VipsError) in
            let lab = try colour.converted(to: .lab)
            let lightness = try lab.extractingBands(0)
            // Percentiles come from a histogram, so measure L* (0–100) in 256 steps, not 101.
            let steps = try lightness.applying("linear", ["a": .number(2.55), "b": .number(0)]).roundedToEightBits()
            let black: Double, white: Double
            if let alpha, let least = try Vips.call("min", ["in": .image(alpha)])["out"]?.number, least < 255 {
                // What cannot be seen has no lightness to stretch: a cut-out's clear (often
                // black) surround would otherwise be taken for its darkest part.
                let visible = try Self.visibleHistogram(of: steps, weightedBy: alpha)
                guard let low = Self.value(of: visible, atPercentile: lower), let high = Self.value(of: visible, atPercentile: upper)
                else { return colour }
                (black, white) = (low / 2.55, high / 2.55)
            } else {
                black = try Self.value(of: steps, atPercentile: lower) / 2.55
                white = try Self.value(of: steps, atPercentile: upper) / 2.55
            }
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

    /// The 256 bins of `steps`' values, each pixel counted by how opaque `alpha` says it is.
    private static func visibleHistogram(of steps: VipsImage, weightedBy alpha: VipsImage) throws(VipsError) -> [Double] {
        let bins = try alpha.applying("hist_find_indexed", ["index": .image(steps), "combine": .string("sum")]).values()
        return bins.count >= 256 ? Array(bins.prefix(256)) : bins + Array(repeating: 0, count: 256 - bins.count)
    }

    /// The bin below which `percentile` per cent of a histogram's weight lies (0 and 100 are its
    /// lowest and highest bins with any), or nil for a histogram with none.
    private static func value(of histogram: [Double], atPercentile percentile: Double) -> Double? {
        let total = histogram.reduce(0, +)
        guard total > 0 else { return nil }
        switch percentile {
        case 0: return histogram.firstIndex { $0 > 0 }.map(Double.init)
        case 100: return histogram.lastIndex { $0 > 0 }.map(Double.init)
        default:
            var sum = 0.0
            for (bin, weight) in histogram.enumerated() {
                sum += weight
                if sum >= total * percentile / 100 { return Double(bin) }
            }
            return Double(histogram.count - 1)
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
