public import PipelineKit
public import Vips

/// Mirrors an image top to bottom, about its horizontal axis (sharp's `flip`); exact and lossless.
public struct Flip: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "flip"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Mirrors top to bottom (the top row becomes the bottom row)."
    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = []

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A flip for use from Swift.
    public init() {}

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "flip" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// The point mirrored top to bottom, with the picture.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        point.mirrored(horizontally: false, vertically: true)
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try image.flipped(.vertical)
    }
}

/// Mirrors an image left to right, about its vertical axis (sharp's `flop`); exact and lossless.
public struct Flop: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "flop"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Mirrors left to right (the left column becomes the right column)."
    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = []

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A flop for use from Swift.
    public init() {}

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String { "flop" }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// The point mirrored left to right, with the picture.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        point.mirrored(horizontally: true, vertically: false)
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try image.flipped(.horizontal)
    }
}
