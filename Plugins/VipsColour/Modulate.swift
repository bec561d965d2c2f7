public import PipelineKit
public import Vips

/// Changes brightness, saturation, hue and lightness as sharp's `modulate` does: in CIE LCh,
/// L becomes L × `brightness` + `lightness`, C becomes C × `saturation` and h becomes
/// h + `hue`, then the image goes back to 8-bit sRGB (or greyscale, which only brightness and
/// lightness affect). Alpha is kept unchanged. With every option at its default the image
/// is returned as it is.
public struct Modulate: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "modulate"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Scales brightness and saturation, rotates hue and adds lightness, in LCh (as sharp)."

    /// The multipliers `brightness` may be.
    public static let brightnessRange = 0.0...100.0
    /// The multipliers `saturation` may be.
    public static let saturationRange = 0.0...100.0
    /// The degrees `hue` may rotate by, a full turn either way.
    public static let hueRange = -360.0...360.0
    /// What `lightness` may add, the whole L\* range either way.
    public static let lightnessRange = -100.0...100.0

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .number(
            "brightness", in: brightnessRange, default: 1, help: "Multiplies lightness (L, 0–100): 0.5 darkens, 2 brightens; 1 leaves it."),
        .number(
            "saturation", in: saturationRange, default: 1,
            help: "Multiplies chroma (C): 0 gives grey, 2 doubles the colourfulness; 1 leaves it."),
        .number("hue", in: hueRange, default: 0, help: "Rotates the hue angle (h) by this many degrees; 180 turns red toward cyan."),
        .number(
            "lightness", in: lightnessRange, default: 0,
            help: "Adds to lightness (L, 0–100) after brightness: 10 lifts every pixel by a tenth of the range."),
    ]

    /// Multiplies L\* (lightness); 1 leaves it.
    public let brightness: Double
    /// Multiplies C\* (chroma); 0 gives grey, 1 leaves it.
    public let saturation: Double
    /// Degrees added to the hue angle.
    public let hue: Double
    /// Added to L\* (0–100) after the brightness multiplier.
    public let lightness: Double

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(
            brightness: options.double("brightness"),
            saturation: options.double("saturation"),
            hue: options.double("hue"),
            lightness: options.double("lightness")
        )
    }

    /// A modulation for use from Swift; checks what the pipeline file's validator would.
    public init(brightness: Double = 1, saturation: Double = 1, hue: Double = 0, lightness: Double = 0) throws(OptionError) {
        try OptionChecks.check("brightness", brightness, in: Self.brightnessRange)
        try OptionChecks.check("saturation", saturation, in: Self.saturationRange)
        try OptionChecks.check("hue", hue, in: Self.hueRange)
        try OptionChecks.check("lightness", lightness, in: Self.lightnessRange)
        self.brightness = brightness
        self.saturation = saturation
        self.hue = hue
        self.lightness = lightness
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        "modulate(brightness:\(brightness),saturation:\(saturation),hue:\(hue),lightness:\(lightness))"
    }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Whether the step leaves every pixel as it is.
    public var isIdentity: Bool {
        brightness == 1 && saturation == 1 && hue.truncatingRemainder(dividingBy: 360) == 0 && lightness == 0
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        if isIdentity { return image }
        let input = try image.inEightBits()
        let kind = input.interpretation
        return try input.withAlphaSetAside { colour throws(VipsError) in
            try colour
                .converted(to: .lch)
                .applying("linear", ["a": .numbers([brightness, saturation, 1]), "b": .numbers([lightness, 0, hue])])
                .converted(to: kind)
                .roundedToEightBits()
        }
    }
}
