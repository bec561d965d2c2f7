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
        guard hasAlpha, !hasOpaqueAlphaInMemory else { return try resampledStraight(to: size, kernel: kernel) }
        return try withAlphaPremultipliedForResampling { image throws(VipsError) in try image.resampledStraight(to: size, kernel: kernel) }
    }

    /// Runs `operation` on premultiplied colour, as `resampled(to:)` resamples an image with
    /// alpha: in 8 bits for 8-bit pixels with an alpha band, in floating point otherwise.
    private func withAlphaPremultipliedForResampling(
        _ operation: (VipsImage) throws(VipsError) -> VipsImage
    ) throws(VipsError) -> VipsImage {
        guard bandFormat == .uchar, bands == 2 || bands == 4 else { return try withPremultipliedAlpha(operation) }
        return try operation(premultipliedInEightBits()).unpremultipliedInEightBits()
    }

    /// Each page (animation frame) resampled to `size`, as `resampled(to:)` resamples one image,
    /// with as many libvips operations for three hundred frames as for two: building an
    /// operation costs far more than a small frame's pixels, so one graph per frame spent most
    /// of an animation's time being built. No frame's pixels reach another's: heights are
    /// reduced with the frames laid side by side (`grid`), widths with them stacked, so a
    /// kernel's neighbours are always in its own frame. Heights first, as libvips' resize does.
    /// (The decoder only ever reduces; an enlargement is made frame by frame.)
    ///
    /// Many frames are computed a run at a time, here rather than where the result is read, so
    /// `shouldStop` (a step's `ProcessingContext.shouldStop`) is asked before each run: a stop
    /// or a time limit that a render of the result would notice is noticed between them.
    public func resampledPages(
        to size: ImageSize, kernel: Kernel = .lanczos3, stoppingWhen shouldStop: () -> Bool = { false }
    ) throws(VipsError) -> VipsImage {
        try resampledPages(to: size, kernel: kernel, runPixels: Self.resampledRunPixels, stoppingWhen: shouldStop)
    }

    /// `resampledPages(to:kernel:stoppingWhen:)`, `runPixels` of frames (whole ones) at a time.
    func resampledPages(
        to size: ImageSize, kernel: Kernel, runPixels: Int, stoppingWhen shouldStop: () -> Bool = { false }
    ) throws(VipsError) -> VipsImage {
        let frameHeight = pageHeight
        guard frameHeight > 0, frameHeight < height, height % frameHeight == 0 else { return try resampled(to: size, kernel: kernel) }
        guard size != ImageSize(width: width, height: frameHeight) else { return self }
        // libvips enlarges through an affine transform, whose interpolation reaches across a
        // frame's edge even along a side it leaves alone: frames enlarged go one at a time.
        guard size.width <= width, size.height <= frameHeight else {
            return try VipsImage.joiningPages(pages().map { page throws(VipsError) in try page.resampled(to: size, kernel: kernel) })
                .withPageHeight(size.height)
        }
        let frames = height / frameHeight
        // Many frames go a run at a time, each put in memory before the next: the frames laid
        // side by side and stacked again are read back through two turns a row at a time, and
        // each row costs in proportion to the frames side by side, so a whole stack at once
        // took time of the square of its frames.
        let framesPerRun = max(1, runPixels / max(1, width * frameHeight))
        if frames > framesPerRun {
            var runs: [VipsImage] = []
            for first in stride(from: 0, to: frames, by: framesPerRun) {
                if shouldStop() { throw VipsError(operation: "resample", message: "stopped before frame \(first + 1) of \(frames)") }
                let count = min(framesPerRun, frames - first)
                // Each run's strip is let go once rendered: the image cut holds one reader at a time.
                let run = try extracted(left: 0, top: first * frameHeight, width: width, height: count * frameHeight)
                runs.append(try run.withPageHeight(frameHeight).resampledPages(to: size, kernel: kernel, runPixels: runPixels).rendered())
            }
            return try VipsImage.stacking(runs).withPageHeight(size.height)
        }
        let resample = { (strip: VipsImage) throws(VipsError) -> VipsImage in
            let sideBySide = try strip.applying(
                "grid", ["tile_height": .integer(frameHeight), "across": .integer(frames), "down": .integer(1)])
            let shorter = try sideBySide.resampledStraight(to: ImageSize(width: sideBySide.width, height: size.height), kernel: kernel)
            let stacked = try shorter.stackedFromSideBySide(frames: frames)
            return try stacked.resampledStraight(to: ImageSize(width: size.width, height: stacked.height), kernel: kernel)
        }
        let resampled = try hasAlpha && !hasOpaqueAlphaInMemory ? withAlphaPremultipliedForResampling(resample) : resample(self)
        return try resampled.withPageHeight(size.height)
    }

    /// The same window of each page (animation frame): `left`, `top`, `width`×`height` within
    /// the page. Columns are cut from the frames stacked, rows from them side by side, so the
    /// operations are as few for many frames as for two.
    public func croppedPages(left: Int, top: Int, width: Int, height: Int) throws(VipsError) -> VipsImage {
        let frameHeight = pageHeight
        guard frameHeight > 0, frameHeight < self.height, self.height % frameHeight == 0 else {
            return try extracted(left: left, top: top, width: width, height: height)
        }
        let frames = self.height / frameHeight
        var image = self
        if width != self.width { image = try image.extracted(left: left, top: 0, width: width, height: image.height) }
        if height != frameHeight {
            let sideBySide = try image.applying(
                "grid", ["tile_height": .integer(frameHeight), "across": .integer(frames), "down": .integer(1)])
            image = try sideBySide.extracted(left: 0, top: top, width: sideBySide.width, height: height).stackedFromSideBySide(
                frames: frames)
        }
        return try image.withPageHeight(height)
    }

    /// Frames laid side by side, `frames` of them, stacked top to bottom in the same order.
    /// libvips' `grid` only lays out a stack, so the row is turned into a stack (its frames
    /// mirrored and in reverse order), laid out, and turned back; the mirrorings undo each other.
    private func stackedFromSideBySide(frames: Int) throws(VipsError) -> VipsImage {
        let frameWidth = width / frames
        let turned = try flipped(.horizontal).rotated(by: .clockwise)
        let row = try turned.applying("grid", ["tile_height": .integer(frameWidth), "across": .integer(frames), "down": .integer(1)])
        return try row.rotated(by: .anticlockwise).flipped(.horizontal)
    }

    /// `resampled(to:)` without its handling of alpha: every band resampled alike.
    private func resampledStraight(to size: ImageSize, kernel: Kernel) throws(VipsError) -> VipsImage {
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
        return try resample(self)
    }

    /// The most pixels of frames `resampledPages(to:)` resamples at once (a run of whole frames,
    /// or one frame when it alone is larger), as the decoder reads an animation's.
    static let resampledRunPixels = 4 << 20

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
