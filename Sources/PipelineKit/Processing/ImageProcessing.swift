public import Vips

/// A processor plugin: one step of an output's chain (resize, crop, blur, …).
///
/// A processor is built from its JSON options, which the pipeline has already checked against
/// `options` (types, ranges, unknown keys), so `init(options:)` only checks what one option
/// cannot say alone (for example "width or height is required") by throwing `OptionError`.
public protocol ImageProcessing: Sendable {
    /// The step's key in a pipeline file, for example `"resize"`.
    static var name: String { get }
    /// One line for `pipeline plugins` and the JSON Schema.
    static var summary: String { get }
    /// Every option the step accepts: the validator, the typed accessors and the schema all read these.
    static var options: [Option] { get }

    init(options: ProcessorOptions) throws(OptionError)

    /// A stable description of the step and its settings, for logs, caches and coalescing.
    var identifier: String { get }

    /// The size this step produces from an input of `size`, so the planner can size decoding.
    func outputSize(for size: ImageSize) -> ImageSize

    /// How much smaller than `size` the decoder may make this step's input without changing its
    /// result beyond resampling: a resize to a quarter of the width allows 4. The default, 1,
    /// means the step needs the full-size image.
    func allowedInputShrink(for size: ImageSize) -> Double

    /// Turns one image into another. A thrown error fails this item only.
    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage
}

extension ImageProcessing {
    public func allowedInputShrink(for size: ImageSize) -> Double { 1 }
}

/// What a processor may know about the item it works on.
public struct ProcessingContext: Sendable {
    /// The input being processed, as the pipeline file or the enumeration named it.
    public let input: String
    /// The name of the output whose chain is running.
    public let output: String
    /// The input's size before decoding shrank it, oriented upright.
    public let originalSize: ImageSize

    public init(input: String, output: String, originalSize: ImageSize) {
        self.input = input
        self.output = output
        self.originalSize = originalSize
    }
}

/// A width and height in pixels.
public struct ImageSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var pixelCount: Int { width * height }
    public var description: String { "\(width)×\(height)" }
}

extension VipsImage {
    /// The image's size in pixels.
    public var size: ImageSize { ImageSize(width: width, height: height) }
}

/// A processor option that is wrong in a way its definition alone cannot catch.
public struct OptionError: Error, Sendable, Equatable {
    /// The option at fault (the JSON key), or nil when it is about the options together.
    public let option: String?
    public let message: String

    public init(option: String?, _ message: String) {
        self.option = option
        self.message = message
    }
}
