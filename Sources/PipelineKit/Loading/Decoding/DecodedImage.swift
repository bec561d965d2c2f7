import Vips

/// An input decoded once, upright and in sRGB, ready to fan out to every output.
struct DecodedImage: Sendable {
    let image: VipsImage
    /// The size the file declares, upright: what processors' sizes are relative to.
    let originalSize: ImageSize
    /// The libvips loader that read the file, for example `jpegload_source`.
    let loader: String
    /// The factor shrink-on-load reduced the image by (1 when it did not).
    let shrink: Int
    /// Animation frames stacked in `image`, one page each (1 for a still image).
    var frameCount = 1
    /// Outputs (by index in the run's outputs) that get a window of their own instead of
    /// `image` (`DecodePlan.windows`).
    var windows: [Int: VipsImage] = [:]

    /// The image output `index`'s steps start from.
    func image(forOutput index: Int) -> VipsImage {
        windows[index] ?? image
    }
}

extension VipsImage {
    /// The size of one frame of an animation (its pages stacked top to bottom), or of the
    /// image: what an output's `{width}` and `{height}` and the manifest give.
    var frameSize: ImageSize { ImageSize(width: width, height: pageHeight) }
}
