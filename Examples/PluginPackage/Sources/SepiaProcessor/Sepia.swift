public import PipelineKit
public import Vips

/// Gives an image the brown tone of an old photograph, through a colour matrix.
///
/// `strength` blends between the image as it is (0) and full sepia (1). Alpha is kept as it is.
public struct Sepia: ImageProcessing {
    /// The step's key in a pipeline file: `{"sepia": {"strength": 0.8}}`.
    public static let name = "sepia"
    public static let summary = "Tones the image sepia through a colour matrix (strength 0–1)."

    public static let options: [Option] = [
        .number("strength", in: 0...1, default: 1, help: "How much sepia: 0 leaves the image as it is, 1 is full sepia."),
    ]

    /// The classic sepia matrix: each output channel is a weighted sum of red, green and blue.
    static let sepia: [[Double]] = [
        [0.393, 0.769, 0.189],
        [0.349, 0.686, 0.168],
        [0.272, 0.534, 0.131],
    ]

    public let strength: Double

    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(strength: options.double("strength"))
    }

    public init(strength: Double) throws(OptionError) {
        guard (0...1).contains(strength) else { throw OptionError(option: "strength", "must be between 0 and 1") }
        self.strength = strength
    }

    /// Goes into fingerprints: change the strength and incremental runs make the output again.
    public var identifier: String { "sepia(strength:\(strength))" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        // The matrix mixes three colour bands: bring greyscale to sRGB first, and keep alpha aside.
        let colour = image.bands < 3 ? try image.converted(to: .sRGB) : image
        let colourBands = try colour.applying("extract_band", ["band": .integer(0), "n": .integer(3)])
        let matrix = (0..<3).map { row in
            (0..<3).map { column in
                (1 - strength) * (row == column ? 1 : 0) + strength * Self.sepia[row][column]
            }
        }
        let toned = try colourBands.applying("recomb", ["m": .image(try VipsImage.matrix(matrix))])
            .applying("round", ["round": .string("rint")])
            .cast(to: .uchar)
        guard colour.hasAlpha else { return try toned.labelled(as: .sRGB) }
        let alpha = try colour.applying("extract_band", ["band": .integer(3)])
        let joined = try Vips.call("bandjoin", ["in": .images([toned, alpha])])["out"]?.image
        guard let joined else { throw VipsError(operation: "bandjoin", message: "gave no image") }
        return try joined.labelled(as: .sRGB)
    }
}
