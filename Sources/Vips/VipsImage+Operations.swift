import CVips

extension VipsImage {
    /// Turns the pixels upright as the EXIF orientation says and resets the orientation to 1.
    public func autorotated() throws(VipsError) -> VipsImage {
        try derive("autorotate") { pl_autorot($0, $1) }
    }

    /// Converts from the embedded ICC profile to sRGB.
    public func convertedFromEmbeddedProfileToSRGB() throws(VipsError) -> VipsImage {
        try derive("icc_transform") { pl_icc_to_srgb($0, $1) }
    }

    /// Converts to another colour space (CMYK to sRGB, 16-bit to 8-bit, …).
    public func converted(to interpretation: Interpretation) throws(VipsError) -> VipsImage {
        try derive("colourspace") { pl_colourspace($0, $1, interpretation.raw) }
    }

    /// The same pixels cast to another band format (values are clipped, not scaled).
    public func cast(to format: BandFormat) throws(VipsError) -> VipsImage {
        try derive("cast") { pl_cast($0, $1, format.raw) }
    }

    /// The same pixels, labelled with another interpretation (no conversion).
    public func labelled(as interpretation: Interpretation) throws(VipsError) -> VipsImage {
        try derive("copy") { pl_copy_with_interpretation($0, $1, interpretation.raw) }
    }

    /// Resamples by separate horizontal and vertical factors.
    public func resized(horizontalScale: Double, verticalScale: Double, kernel: Kernel) throws(VipsError) -> VipsImage {
        try derive("resize") { pl_resize($0, $1, horizontalScale, verticalScale, kernel.raw) }
    }

    /// Multiplies colour by alpha, so that resampling does not bleed the colour of transparent pixels.
    public func premultiplied() throws(VipsError) -> VipsImage {
        try derive("premultiply") { pl_premultiply($0, $1) }
    }

    /// Undoes `premultiplied()`; the result is float, so cast it back to the input's format.
    public func unpremultiplied() throws(VipsError) -> VipsImage {
        try derive("unpremultiply") { pl_unpremultiply($0, $1) }
    }

    /// Cuts out a rectangle, which must lie inside the image.
    public func extracted(left: Int, top: Int, width: Int, height: Int) throws(VipsError) -> VipsImage {
        try derive("extract_area") { pl_extract_area($0, $1, Int32(left), Int32(top), Int32(width), Int32(height)) }
    }

    /// Crops to `width`×`height`, keeping the most interesting part.
    public func smartCropped(width: Int, height: Int, interest: Interest) throws(VipsError) -> VipsImage {
        // smartcrop's build reads every pixel of its input to place the window, and builds a
        // resize while it does, so it runs under the vector-code lock: the input is computed
        // first, outside the lock, which is then held only while pixels already in memory are
        // read. The crop is then cut from memory, not computed a second time.
        let input = isInMemory ? self : try rendered()
        return try input.derive("smartcrop") { pl_smartcrop($0, $1, Int32(width), Int32(height), interest.raw) }
    }

    /// Places the image at (`x`, `y`) on a `width`×`height` canvas filled with `background`
    /// (one value per band).
    public func embedded(x: Int, y: Int, width: Int, height: Int, background: [Double]) throws(VipsError) -> VipsImage {
        try derive("embed") { input, output in
            background.withUnsafeBufferPointer {
                pl_embed(input, output, Int32(x), Int32(y), Int32(width), Int32(height), $0.baseAddress, Int32($0.count))
            }
        }
    }

    /// Removes the alpha band by compositing over `background` (one value per colour band).
    public func flattened(background: [Double]) throws(VipsError) -> VipsImage {
        try derive("flatten") { input, output in
            background.withUnsafeBufferPointer { pl_flatten(input, output, $0.baseAddress, Int32($0.count)) }
        }
    }

    /// Appends a constant band, for example an opaque alpha of 255.
    public func appendingBand(value: Double) throws(VipsError) -> VipsImage {
        try derive("bandjoin_const") { pl_bandjoin_const1($0, $1, value) }
    }

    /// Blurs with a Gaussian of standard deviation `sigma` pixels.
    public func gaussianBlurred(sigma: Double) throws(VipsError) -> VipsImage {
        try derive("gaussblur") { pl_gaussblur($0, $1, sigma) }
    }

    /// Computes every pixel now, into memory.
    ///
    /// libvips is lazy: without this, the work of a stage would silently run in whichever
    /// stage first reads the pixels.
    public func rendered() throws(VipsError) -> VipsImage {
        let copy = withExtendedLifetime(self) { vips_image_copy_memory(pointer) }
        guard let copy else { throw VipsError.fromLibrary(operation: "copy_memory") }
        return VipsImage(taking: copy)
    }

    /// Fails as a computation on this image would once a deadline has stopped it (set its kill),
    /// which notices the kill and so clears it: for work on a copy in memory, such as a quality
    /// search's trial encodes, which the kill does not reach.
    public func checkNotStopped() throws(VipsError) {
        guard withExtendedLifetime(self, { vips_image_iskilled(pointer) }) != 0 else { return }
        throw VipsError.fromLibrary(operation: "kill")
    }

    /// The image with rows and columns swapped (its own transpose), in memory, metadata kept.
    /// Only for 8-bit images of 1 to 4 bands; one that is not in memory is computed for it, a
    /// strip of rows at a time on the calling thread.
    public func transposed() throws(VipsError) -> VipsImage {
        try requireEightBits("transpose", bands: [1, 2, 3, 4], needs: "needs an 8-bit image of 1 to 4 bands")
        let copy = withExtendedLifetime(self) { pl_transposed(pointer) }
        guard let copy else { throw VipsError.fromLibrary(operation: "transpose") }
        return VipsImage(taking: copy)
    }

    /// Colour multiplied by alpha in 8 bits (round(c × a / 255)), for an 8-bit image of 2 or 4
    /// bands, computed as it is read: where `premultiplied()` gives float pixels, these stay
    /// 8-bit, which libvips reduces with vector code. Undone by `unpremultipliedInEightBits()`.
    public func premultipliedInEightBits() throws(VipsError) -> VipsImage {
        try requireEightBits("premultiply", bands: [2, 4], needs: "needs an 8-bit image of 2 or 4 bands")
        return try derive("premultiply") { pl_alpha_8bit($0, $1, 1) }
    }

    /// Colour divided by alpha again (round(c × 255 / a), at most 255; 0 where alpha is 0),
    /// for an 8-bit image of 2 or 4 bands, computed as it is read.
    public func unpremultipliedInEightBits() throws(VipsError) -> VipsImage {
        try requireEightBits("unpremultiply", bands: [2, 4], needs: "needs an 8-bit image of 2 or 4 bands")
        return try derive("unpremultiply") { pl_alpha_8bit($0, $1, 0) }
    }

    /// Box-shrunk by whole factors: each pixel the rounded mean of a `horizontal` × `vertical`
    /// block (the last blocks taking what is left), for an 8-bit image in memory; `vertical`
    /// at most 257. One pass, where libvips' `shrinkh` and `shrinkv` take one each.
    public func boxShrunk(horizontal: Int, vertical: Int) throws(VipsError) -> VipsImage {
        let needs = "needs an 8-bit image in memory and shrinks of 1 or more (down at most 257)"
        try requireEightBits("shrink", bands: nil, inMemory: true, needs: needs)
        guard horizontal >= 1, (1...257).contains(vertical) else { throw VipsError(operation: "shrink", message: needs) }
        let copy = withExtendedLifetime(self) { pl_box_shrunk(pointer, Int32(horizontal), Int32(vertical)) }
        guard let copy else { throw VipsError.fromLibrary(operation: "shrink") }
        return VipsImage(taking: copy)
    }

    /// Refuses an image the shim's 8-bit code cannot read (`allowed` band counts, nil for any),
    /// with the shim's own words. Checked
    /// here because a refusal the shim raised would travel through libvips' one error buffer,
    /// where a failure on another thread may read it first and leave this one without a reason.
    private func requireEightBits(_ operation: String, bands allowed: [Int]?, inMemory: Bool = false, needs: String) throws(VipsError) {
        let fits =
            bandFormat == .uchar && vips_image_get_coding(pointer) == VIPS_CODING_NONE && (allowed?.contains(bands) ?? true)
            && (!inMemory || isInMemory)
        guard fits else { throw VipsError(operation: operation, message: needs) }
    }

    /// A private copy whose metadata the caller may set before sharing it.
    func privateCopy() throws(VipsError) -> VipsImage {
        try derive("copy") { pl_copy($0, $1) }
    }
}
