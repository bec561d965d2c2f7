public import PipelineKit
public import Vips

/// Replaces each pixel by the median of the `size`×`size` square around it, as sharp's
/// `median`: removes specks (salt-and-pepper noise) while keeping edges; the size does not change.
///
/// Each band, alpha included, takes its own median, as in sharp: a median only ever picks
/// values that are there, so an isolated transparent or opaque speck goes too, and no colour
/// is invented.
public struct Median: ImageProcessing, Hashable {
    public static let name = "median"
    public static let summary = "Median filter over a size×size square (odd size): removes specks, keeps edges."

    public static let sizeRange = 1...1000

    public static let options: [Option] = [
        .integer("size", in: sizeRange, default: 3, help: "Side of the square window in pixels; odd, so the window is centred on its pixel. 1 changes nothing."),
    ]

    /// The side of the square window, in pixels.
    public let size: Int

    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(size: options.int("size"))
    }

    /// A median filter for use from Swift; checks what the pipeline file's validator would.
    public init(size: Int = 3) throws(OptionError) {
        guard Self.sizeRange.contains(size) else {
            throw OptionError(option: "size", "must be between \(Self.sizeRange.lowerBound) and \(Self.sizeRange.upperBound)")
        }
        guard size % 2 == 1 else {
            throw OptionError(option: "size", "must be odd, so the window is centred on its pixel: \(size) is even")
        }
        self.size = size
    }

    public var identifier: String { "median(size:\(size))" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        guard size > 1 else { return image }
        return try image.applying("rank", ["width": .integer(size), "height": .integer(size), "index": .integer(size * size / 2)])
    }
}
