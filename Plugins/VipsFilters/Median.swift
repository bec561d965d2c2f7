public import PipelineKit
public import Vips

/// Replaces each pixel by the median of the `size`×`size` square around it, as sharp's
/// `median`: removes specks (salt-and-pepper noise) while keeping edges; the size does not change.
///
/// Each band, alpha included, takes its own median, as in sharp: a median only ever picks
/// values that are there, so an isolated transparent or opaque speck goes too, and no colour
/// is invented.
public struct Median: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "median"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Median filter over a size×size square (odd size): removes specks, keeps edges."

    /// The square sizes `size` may be, in pixels.
    public static let sizeRange = 1...1000

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .integer(
            "size", in: sizeRange, default: 3,
            help:
                "Side of the square window in pixels; odd, so the window is centred on its pixel. 1 changes nothing. "
                + "Pixels past the edges count as copies of the edge, however small the image. Past 3 each window is sorted, "
                + "exact but slower as the size grows (Benchmarks/RESULTS.md has figures).")
    ]

    /// The side of the square window, in pixels.
    public let size: Int

    /// The step as a pipeline file configures it, from its checked options.
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

    /// The step and its settings, for logs, caches and coalescing. A window of more than ten
    /// pixels is marked exact: files made by the drifting medians of libvips' 8-bit path,
    /// before this step sorted around it, are made again.
    public var identifier: String { size * size > 10 ? "median(size:\(size),exact)" : "median(size:\(size))" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        guard size > 1 else { return image }
        // libvips before 8.17.2 slides the histogram it keeps for an 8-bit image's windows of more
        // than ten pixels one column short, and its medians drift far from the true ones
        // (libvips#4609). A 16-bit copy takes its sorting path instead, which is exact, and a
        // median of 8-bit values fits 8 bits again.
        let sortsInSixteenBits = image.bandFormat == .uchar && size * size > 10 && !Vips.isAtLeast(8, 17, 2)
        let source = sortsInSixteenBits ? try image.cast(to: .ushort) : image
        let filtered = try Self.rank(source, size: size)
        return sortsInSixteenBits ? try filtered.cast(to: image.bandFormat) : filtered
    }

    /// The median of each `size`×`size` window of `image`.
    private static func rank(_ image: VipsImage, size: Int) throws -> VipsImage {
        let rank: [String: VipsValue] = ["width": .integer(size), "height": .integer(size), "index": .integer(size * size / 2)]
        guard image.width < size || image.height < size else { return try image.applying("rank", rank) }
        // libvips refuses a window larger than the image, which a tiny input in a batch has.
        // It takes the pixels past the edges as copies of the edge; padded so first, the image
        // gets the medians libvips would give it were it large enough.
        let margin = size / 2
        let padded = try image.embedded(
            x: margin, y: margin, width: image.width + 2 * margin, height: image.height + 2 * margin, extend: .copy)
        return try padded.applying("rank", rank).extracted(left: margin, top: margin, width: image.width, height: image.height)
    }
}
