public import PipelineKit
public import Vips

/// Sharpens an image, as sharp's `sharpen`; the size, bands and band format do not change.
///
/// Without options it is sharp's fast, mild sharpen: a 3×3 convolution that adds 1/3 of the
/// difference between a pixel and its eight neighbours' mean. With `sigma` it is libvips' unsharp
/// mask on lightness (in LAB), with sharp's defaults for the other settings, and the result is
/// converted back to the image's own colour space. Alpha is never sharpened.
public struct Sharpen: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "sharpen"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Sharpens: mildly and fast without options, or an unsharp mask on lightness with sigma."

    /// What kind of sharpening.
    public enum Mode: Hashable, Sendable {
        /// sharp's fast, mild sharpen (a fixed 3×3 kernel).
        case mild
        /// libvips' unsharp mask on lightness; see the options' help for each setting.
        case unsharpMask(sigma: Double, m1: Double, m2: Double, x1: Double, y2: Double, y3: Double)
    }

    /// The sigmas the unsharp mask's Gaussian may have, in pixels.
    public static let sigmaRange = 0.000001...10.0
    /// The values `m1`, `m2`, `x1`, `y2` and `y3` may take.
    public static let settingRange = 0.0...1_000_000.0

    /// The settings that only an unsharp mask (`sigma`) reads, with sharp's defaults.
    static let maskSettings: [(name: String, default: Double, help: String)] = [
        ("m1", 1.0, "Sharpening of flat areas (slope below x1)."),
        ("m2", 2.0, "Sharpening of jagged areas (slope above x1)."),
        ("x1", 2.0, "The threshold between flat and jagged, in lightness (0–100)."),
        ("y2", 10.0, "The most a pixel may brighten, in lightness."),
        ("y3", 20.0, "The most a pixel may darken, in lightness."),
    ]

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] =
        [
            .number(
                "sigma", in: sigmaRange, help: "Sigma of the unsharp mask's Gaussian (about 1 + radius/2). Without it, a fast mild sharpen."
            )
        ] + maskSettings.map { .number($0.name, in: settingRange, default: $0.default, help: $0.help + " Needs sigma.") }

    /// A mild sharpen, or an unsharp mask with its settings.
    public let mode: Mode

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        guard let sigma = try options.optionalDouble("sigma") else {
            if let given = Self.maskSettings.first(where: { options.has($0.name) }) {
                throw OptionError(
                    option: "sigma", "is required with \(given.name): without sigma, sharpen is a fast mild sharpen with fixed settings")
            }
            self.init()
            return
        }
        try self.init(
            sigma: sigma, m1: options.double("m1"), m2: options.double("m2"),
            x1: options.double("x1"), y2: options.double("y2"), y3: options.double("y3")
        )
    }

    /// sharp's fast, mild sharpen.
    public init() {
        mode = .mild
    }

    /// An unsharp mask for use from Swift, with sharp's defaults; checks what the pipeline
    /// file's validator would.
    public init(sigma: Double, m1: Double = 1, m2: Double = 2, x1: Double = 2, y2: Double = 10, y3: Double = 20) throws(OptionError) {
        guard Self.sigmaRange.contains(sigma) else {
            throw OptionError(option: "sigma", "must be between \(Self.sigmaRange.lowerBound) and \(Self.sigmaRange.upperBound)")
        }
        for (name, value) in [("m1", m1), ("m2", m2), ("x1", x1), ("y2", y2), ("y3", y3)] {
            guard Self.settingRange.contains(value) else {
                throw OptionError(option: name, "must be between \(Self.settingRange.lowerBound) and \(Self.settingRange.upperBound)")
            }
        }
        mode = .unsharpMask(sigma: sigma, m1: m1, m2: m2, x1: x1, y2: y2, y3: y3)
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        switch mode {
        case .mild:
            "sharpen(mild)"
        case .unsharpMask(let sigma, let m1, let m2, let x1, let y2, let y3):
            "sharpen(sigma:\(sigma),m1:\(m1),m2:\(m2),x1:\(x1),y2:\(y2),y3:\(y3))"
        }
    }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        // On premultiplied colour, as `blur` and `resize` work: the colour hidden under
        // transparent pixels must not show at their visible neighbours. Alpha itself is kept.
        try image.withPremultipliedAlpha { premultiplied throws(VipsError) in
            try premultiplied.withAlphaSetAside { colour throws(VipsError) in try sharpenedColour(colour) }
        }
    }

    /// `colour`, without alpha, sharpened, in its band format.
    private func sharpenedColour(_ colour: VipsImage) throws(VipsError) -> VipsImage {
        switch mode {
        case .mild:
            return try Self.mildlySharpened(colour)
        case .unsharpMask(let sigma, let m1, let m2, let x1, let y2, let y3):
            var sharpened = try colour.applying(
                "sharpen",
                [
                    "sigma": .number(sigma), "m1": .number(m1), "m2": .number(m2),
                    "x1": .number(x1), "y2": .number(y2), "y3": .number(y3),
                ])
            // libvips sharpens in LABS; it converts back itself, but only where it knows how.
            if sharpened.interpretation != colour.interpretation {
                sharpened = try sharpened.converted(to: colour.interpretation)
            }
            return sharpened.bandFormat == colour.bandFormat ? sharpened : try sharpened.cast(to: colour.bandFormat)
        }
    }

    /// sharp's mild sharpen: the kernel -1 all round and 32 in the middle, divided by 24.
    private static func mildlySharpened(_ image: VipsImage) throws(VipsError) -> VipsImage {
        // A 3×3 image of 0 with 33 in the middle, mapped by (v - 1) / 24 to the kernel.
        let mask = try VipsImage(pixels: [0, 0, 0, 0, 33, 0, 0, 0, 0], width: 3, height: 3, bands: 1)
            .applying("linear", ["a": .number(1.0 / 24), "b": .number(-1.0 / 24)])
        guard
            let convolved = try Vips.call("conv", ["in": .image(image), "mask": .image(mask), "precision": .string("float")])["out"]?.image
        else {
            throw VipsError(operation: "conv", message: "conv gave no output image")
        }
        // The float result rounds to nearest, then clips to the input's format.
        return try convolved.applying("round", ["round": .string("rint")]).cast(to: image.bandFormat)
    }
}
