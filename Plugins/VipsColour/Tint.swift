public import PipelineKit
public import Vips

/// Tints the image as sharp's `tint` does: each pixel keeps its lightness (CIE L\*) and takes
/// the chroma (a\*, b\*) of `color`, so the result is shades of that one hue. Alpha is kept
/// unchanged. The output is 8-bit sRGB, for a greyscale input too (a tint adds colour).
public struct Tint: ImageProcessing, Hashable {
    public static let name = "tint"
    public static let summary = "Keeps each pixel's lightness and gives it the chroma (hue and colourfulness) of a colour."

    public static let options: [Option] = [
        Option("color", .colour, required: true, help: "The tint: its a*/b* chroma replaces the image's; its lightness and alpha are not used."),
    ]

    /// The tint as red, green, blue and alpha, 0–255; only its chroma is used.
    public let color: [Double]

    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(color: options.colour("color"))
    }

    /// A tint for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter color: red, green, blue and optionally alpha, 0–255.
    public init(color: [Double]) throws(OptionError) {
        self.color = try OptionChecks.colour("color", color)
    }

    public var identifier: String { "tint(color:\(OptionChecks.hex(Array(color.prefix(3)))))" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let chroma = Array(try VipsImage.sRGBColour(Array(color.prefix(3)), in: .lab).dropFirst().prefix(2))
        return try image.inEightBits().withAlphaSetAside { colour throws(VipsError) in
            try colour
                .converted(to: .lab)
                .extractingBands(0)
                .applying("bandjoin_const", ["c": .numbers(chroma)])
                .labelled(as: .lab)
                .converted(to: .sRGB)
                .roundedToEightBits()
        }
    }
}
