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
    public func resampled(to size: ImageSize, kernel: Kernel = .lanczos3) throws(VipsError) -> VipsImage {
        guard size != self.size else { return self }
        let horizontal = Double(size.width) / Double(width)
        let vertical = Double(size.height) / Double(height)
        return try withPremultipliedAlpha { premultiplied throws(VipsError) in
            try premultiplied.resized(horizontalScale: horizontal, verticalScale: vertical, kernel: kernel)
        }
    }
}
