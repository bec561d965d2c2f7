public import PipelineKit
public import Vips

/// Tints the image as sharp's `tint` does: each pixel keeps its lightness (CIE L\*) and takes
/// the chroma (a\*, b\*) of `color`, weighted by that lightness: in full at mid-grey (L\* 50),
/// fading to none at black and white (weight 1 − 4 (L\*/100 − ½)²), so the result is shades
/// of that one hue. Alpha is kept unchanged. The output is 8-bit sRGB, for a greyscale input too
/// (a tint adds colour).
public struct Tint: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "tint"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Keeps each pixel's lightness and gives it the chroma (hue and colourfulness) of a colour."

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        Option(
            "color", .colour, required: true,
            help:
                "The tint: its a*/b* chroma replaces the image's, in full at mid-grey and less towards black and white; its lightness and alpha are not used."
        )
    ]

    /// The tint as red, green, blue and alpha, 0–255; only its chroma is used.
    public let color: [Double]

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(color: options.colour("color"))
    }

    /// A tint for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter color: red, green, blue and optionally alpha, 0–255.
    public init(color: [Double]) throws(OptionError) {
        self.color = try OptionChecks.colour("color", color)
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "tint(color:\(OptionChecks.hex(Array(color.prefix(3)))))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let chroma = Array(try VipsImage.sRGBColour(Array(color.prefix(3)), in: .lab).dropFirst().prefix(2))
        return try image.inEightBits().withAlphaSetAside { colour throws(VipsError) in
            let lightness = try colour.converted(to: .lab).extractingBands(0)
            // weight × chroma, with weight = 1 − 4 (L/100 − ½)² = L (100 − L) / 2500; one
            // band in, a* and b* out.
            let weighted =
                try lightness
                .applying("multiply", ["right": .image(lightness.applying("linear", ["a": .number(-1), "b": .number(100)]))])
                .applying("linear", ["a": .numbers(chroma.map { $0 / 2500 }), "b": .numbers([0, 0])])
            return
                try lightness
                .joiningBands(weighted)
                .labelled(as: .lab)
                .converted(to: .sRGB)
                .roundedToEightBits()
        }
    }
}
