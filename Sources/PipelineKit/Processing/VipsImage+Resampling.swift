import Vips

extension VipsImage {
    /// Runs `operation` on premultiplied colour when the image has alpha, then undoes the
    /// premultiplication and casts back to this image's band format.
    ///
    /// Resampling or blurring straight alpha lets the colour of invisible pixels bleed into
    /// their visible neighbours (dark or coloured fringes); premultiplying first prevents that.
    public func withPremultipliedAlpha(
        _ operation: (VipsImage) throws(VipsError) -> VipsImage
    ) throws(VipsError) -> VipsImage {
        guard hasAlpha else { return try operation(self) }
        let format = bandFormat
        return try operation(premultiplied()).unpremultiplied().cast(to: format)
    }

    /// Resamples to exactly `size`, on premultiplied colour when the image has alpha.
    ///
    /// Separate horizontal and vertical factors from the integer target: libvips makes each
    /// side round(input × factor), which gives back exactly `size`, where one factor for both
    /// could leave a side a pixel off (and a loader that rounded a side short is stretched back).
    ///
    /// Rows are box-shrunk first, by the whole factor libvips' resize would box-shrink them by
    /// (it leaves at least a factor of two to the kernel): its resize shrinks columns first, so
    /// the rows it buffers for that are full width, where rows shrunk first are narrow and a
    /// large image streamed through in one pass peaks far lower.
    /// An 8-bit image already in memory is box-shrunk both ways at once instead, in one pass
    /// (`boxShrunk`): libvips 8.14's `shrinkh` and `shrinkv` are plain C loops, and a
    /// placeholder 32 pixels wide from a 1280-pixel image spent most of its time there.
    /// Then, for 8-bit pixels, rows are narrowed through the transpose where the image reduced
    /// in height fits (`reducesRowsThroughTranspose`): libvips' vector path does both sides.
    ///
    /// Alpha is premultiplied in 8 bits for 8-bit pixels (`premultipliedInEightBits()`), which
    /// keeps them on that path, and in floating point otherwise, as libvips does. An alpha band
    /// that is everywhere opaque (`hasOpaqueAlphaInMemory`: a PNG or WebP saved with alpha it
    /// does not use) is resampled as it is: premultiplying by it changes nothing. Measured with
    /// `Benchmarks/run.sh` (see Benchmarks/RESULTS.md).
    public func resampled(to size: ImageSize, kernel: Kernel = .lanczos3) throws(VipsError) -> VipsImage {
        guard size != self.size else { return self }
        // The whole factors libvips' resize would box-shrink by (it leaves at least a factor of two to the kernel).
        let rowShrink = max(1, Int((Double(width) / (Double(size.width) * 2)).rounded(.down)))
        let columnShrink = max(1, Int((Double(height) / (Double(size.height) * 2)).rounded(.down)))
        let resample = { (input: VipsImage) throws(VipsError) -> VipsImage in
            var image = input
            // Only where the result is a sixteenth of the image or less: a smaller shrink of a large
            // image in memory (a photograph's PNG read whole, made a few times narrower) would hold
            // a quarter of it again, where libvips' shrinkh streams, and the PNG corpus peaks higher.
            if rowShrink * columnShrink >= 16, columnShrink <= 257, image.isInMemory, image.bandFormat == .uchar {
                image = try image.boxShrunk(horizontal: rowShrink, vertical: columnShrink)
            } else if rowShrink > 1 {
                image = try image.applying("shrinkh", ["hshrink": .integer(rowShrink)])
            }
            let horizontalScale = Double(size.width) / Double(image.width)
            let verticalScale = Double(size.height) / Double(image.height)
            if image.reducesRowsThroughTranspose(horizontalScale: horizontalScale, verticalScale: verticalScale, height: size.height) {
                return try image.reducedThroughTranspose(verticalScale: verticalScale, width: size.width, kernel: kernel)
            }
            return try image.resized(horizontalScale: horizontalScale, verticalScale: verticalScale, kernel: kernel)
        }
        guard hasAlpha, !hasOpaqueAlphaInMemory else { return try resample(self) }
        guard bandFormat == .uchar, bands == 2 || bands == 4 else { return try withPremultipliedAlpha(resample) }
        return try resample(premultipliedInEightBits()).unpremultipliedInEightBits()
    }

    /// The most bytes the image reduced vertically may take in memory for `resampled(to:)` to
    /// narrow its rows through the transpose (4 bytes a pixel, 2800×2800 pixels).
    static let transposedReductionMostBytes = 32 << 20

    /// Whether `resampled(to:)` should narrow rows by reducing the transposed image's columns.
    /// libvips 8.14 reduces an 8-bit image's height with vector code (`reducev`, Orc) and its
    /// width with plain C (`reduceh`), several times slower for the same reduction. Two
    /// transposes cost less than the difference; the price is the
    /// image reduced in height, transposed, in memory (`height` rows of this width), hence the
    /// bound. Float pixels have no vector path either way.
    func reducesRowsThroughTranspose(horizontalScale: Double, verticalScale: Double, height: Int) -> Bool {
        bandFormat == .uchar && (1...4).contains(bands) && horizontalScale < 1 && verticalScale <= 1
            && width * height * bands <= Self.transposedReductionMostBytes
    }

    /// Reduced by `verticalScale`, then to `width` columns as a reduction of the transposed
    /// image's height, transposed back: the two transposes are the only buffers it makes.
    fileprivate func reducedThroughTranspose(verticalScale: Double, width: Int, kernel: Kernel) throws(VipsError) -> VipsImage {
        let turned = try (verticalScale < 1 ? resized(horizontalScale: 1, verticalScale: verticalScale, kernel: kernel) : self).transposed()
        return try turned.resized(horizontalScale: 1, verticalScale: Double(width) / Double(turned.height), kernel: kernel).transposed()
    }
}
