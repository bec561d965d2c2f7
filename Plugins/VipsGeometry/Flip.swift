public import PipelineKit
public import Vips

/// Mirrors an image top to bottom, about its horizontal axis (sharp's `flip`); exact and lossless.
public struct Flip: ImageProcessing, Hashable {
    public static let name = "flip"
    public static let summary = "Mirrors top to bottom (the top row becomes the bottom row)."
    public static let options: [Option] = []

    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A flip for use from Swift.
    public init() {}

    public var identifier: String { "flip" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try image.flipped(.vertical)
    }
}

/// Mirrors an image left to right, about its vertical axis (sharp's `flop`); exact and lossless.
public struct Flop: ImageProcessing, Hashable {
    public static let name = "flop"
    public static let summary = "Mirrors left to right (the left column becomes the right column)."
    public static let options: [Option] = []

    public init(options: ProcessorOptions) throws(OptionError) {
        self.init()
    }

    /// A flop for use from Swift.
    public init() {}

    public var identifier: String { "flop" }

    public func outputSize(for size: ImageSize) -> ImageSize { size }

    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try image.flipped(.horizontal)
    }
}
