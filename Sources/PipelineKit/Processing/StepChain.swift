import Vips

/// The process stage's work for one output: its steps, in order, on the decoded image, and
/// the result computed into memory (so the work is done here, not lazily in the encoder).
struct StepChain: Sendable {
    let steps: [any ImageProcessing]
    /// Whether every frame of an animation is kept (an animated GIF or WebP output) or only the first.
    let keepsEveryFrame: Bool
    /// For a width of a set, the index of its resize: the image's size there decides which
    /// widths are made (`PipelineDefinition.maker(ofFileOf:atResize:)`).
    let resizeIndex: Int?

    init(_ output: OutputDefinition) {
        steps = output.steps
        keepsEveryFrame = output.animates
        resizeIndex = output.variant?.stepsBeforeResize
    }

    /// The chain's result, and the size (of a frame) its image had as it reached the resize of
    /// a set's width.
    struct Made {
        let image: VipsImage
        let atResize: ImageSize?
    }

    /// The output at `outputIndex` (in the run's outputs) made from `decoded`: from the window
    /// decoded for it, when it has one; computed under `deadline` (the input's time), when given.
    func apply(to decoded: DecodedImage, outputIndex: Int, context: ProcessingContext, under deadline: VipsDeadline? = nil)
        throws(ItemError) -> Made
    {
        var atResize: ImageSize?
        guard decoded.frameCount > 1 else {
            let image = try apply(to: decoded.image(forOutput: outputIndex), context: context, under: deadline, atResize: &atResize)
            return Made(image: try rendered(image, under: deadline), atResize: atResize)
        }
        guard keepsEveryFrame else {
            let first: VipsImage
            do {
                // A still: without the frame height it would keep, a step that made it a
                // multiple of that height (an enlarging resize) would leave it read, named and
                // saved (TIFF, HEIC) as several frames.
                first = try decoded.image.extracted(left: 0, top: 0, width: decoded.image.width, height: decoded.image.pageHeight)
                    .removingFields(["page-height", "n-pages", "delay", "gif-delay", "loop", "gif-loop"])
            } catch {
                throw Self.failure(error)
            }
            let image = try apply(to: first, context: context, under: deadline, atResize: &atResize)
            return Made(image: try rendered(image, under: deadline), atResize: atResize)
        }
        // An animation's steps run on every frame alike, so a crop crops each frame and a resize
        // resizes each: all frames at once where the step can (`processFrames`), else one by
        // one, stacked again after each step, one page a frame.
        var frames = decoded.image
        var context = context
        for (index, step) in steps.enumerated() {
            let frameSize = ImageSize(width: frames.width, height: frames.pageHeight)
            if index == resizeIndex { atResize = frameSize }
            let named = ItemError.Step(index: index, name: type(of: step).name)
            let bands = frames.bands
            frames = try apply(step, named: named, toEveryFrameOf: frames, context: context)
            try Self.checkTime(deadline, after: named)
            try Self.checkBands(of: frames, from: bands, after: named)
            // Everything the step made, frames together, counted as a still image's result is.
            if frames.size.pixelCount > context.maxPixels {
                throw ItemError(
                    .tooManyPixels, stage: .process,
                    reason: "the \(decoded.frameCount) frames would be \(frames.size), "
                        + "more than the \(context.maxPixels) pixels decompress.maxPixels allows", step: named)
            }
            let resultSize = ImageSize(width: frames.width, height: frames.pageHeight)
            context = context.after(step, from: frameSize, to: resultSize)
        }
        if resizeIndex == steps.count { atResize = ImageSize(width: frames.width, height: frames.pageHeight) }
        let joined: VipsImage
        do {
            joined = try Self.withAnimationFields(of: decoded.image, frames: decoded.frameCount, on: frames)
        } catch {
            throw Self.failure(error)
        }
        return Made(image: try rendered(joined, under: deadline), atResize: atResize)
    }

    /// `step` on each frame of `frames` (stacked, one page a frame), the results stacked alike.
    private func apply(_ step: any ImageProcessing, named: ItemError.Step, toEveryFrameOf frames: VipsImage, context: ProcessingContext)
        throws(ItemError) -> VipsImage
    {
        let result: VipsImage
        do {
            if let whole = try step.processFrames(frames, context: context) {
                result = whole
            } else {
                let processed = try frames.pages().map { frame in try step.process(frame, context: context) }
                let sizes = Set(processed.map(\.size))
                guard sizes.count == 1 else {
                    // A step that sizes each frame by its own content (a plugin's) cannot keep them one
                    // animation: said with what to do about it.
                    let shown = sizes.map(\.description).sorted().prefix(3).joined(separator: ", ")
                    throw ItemError(
                        .processing, stage: .process,
                        reason: "the steps made frames of different sizes (\(shown)), which cannot be one animation: "
                            + "decompress.animation \"first\" makes a still of the first frame", step: named)
                }
                result = try VipsImage.joiningPages(processed)
            }
        } catch let error as ItemError {
            throw error
        } catch {
            throw Self.failure(of: named, error)
        }
        let frame = ImageSize(width: result.width, height: result.pageHeight)
        if frame.pixelCount > context.maxPixels {
            throw ItemError(
                .tooManyPixels, stage: .process,
                reason: "the result would be \(frame), more than the \(context.maxPixels) pixels decompress.maxPixels allows", step: named)
        }
        return result
    }

    /// `image` with the frame delays and loop count of the `decoded` animation, which a step
    /// that makes a new image (rather than changing one) would otherwise leave behind: the
    /// GIF, WebP and AVIF encoders read them from the image.
    private static func withAnimationFields(of decoded: VipsImage, frames: Int, on image: VipsImage) throws(VipsError) -> VipsImage {
        var image = image
        if let delays = decoded.frameDelays, delays.count == frames, image.frameDelays != delays {
            image = try image.settingFrameDelays(delays)
        }
        if let loop = decoded.intField("loop"), image.intField("loop") != loop {
            image = try image.settingIntField("loop", to: loop)
        }
        return image
    }

    private func apply(to image: VipsImage, context: ProcessingContext, under deadline: VipsDeadline?, atResize: inout ImageSize?)
        throws(ItemError) -> VipsImage
    {
        var image = image
        var context = context
        for (index, step) in steps.enumerated() {
            let named = ItemError.Step(index: index, name: type(of: step).name)
            if index == resizeIndex { atResize = image.size }
            let bands = image.bands
            do {
                let input = image.size
                image = try step.process(image, context: context)
                context = context.after(step, from: input, to: image.size)
            } catch {
                throw Self.failure(of: named, error)
            }
            try Self.checkTime(deadline, after: named)
            try Self.checkBands(of: image, from: bands, after: named)
            // A step may grow the image (extend, rotate, vips): the header says by how much
            // before any pixel is computed, so refuse what decoding would have refused.
            if image.size.pixelCount > context.maxPixels {
                throw ItemError(
                    .tooManyPixels, stage: .process,
                    reason: "the result would be \(image.size), "
                        + "more than the \(context.maxPixels) pixels decompress.maxPixels allows", step: named)
            }
        }
        // "original" has no resize: where it would be may be the end.
        if resizeIndex == steps.count { atResize = image.size }
        return image
    }

    private func rendered(_ image: VipsImage, under deadline: VipsDeadline?) throws(ItemError) -> VipsImage {
        do {
            return try deadline?.render(image) ?? image.rendered()
        } catch {
            throw Self.failure(error)
        }
    }

    /// Throws, naming `step`, when the input's time ran out while it ran: a step that works
    /// itself (not lazily in libvips) is where the time went, which the runner's timeout then
    /// names.
    private static func checkTime(_ deadline: VipsDeadline?, after step: ItemError.Step) throws(ItemError) {
        guard let deadline, deadline.hasRunOut else { return }
        throw ItemError(.processing, stage: .process, reason: "the input's time ran out", step: step)
    }

    /// Throws, naming `step`, when it gave an image more bands than the 4 an encoder takes
    /// (colour and alpha) from one that had no more: an encoder would fail with libvips' words
    /// for it, or drop the bands it does not know.
    private static func checkBands(of image: VipsImage, from bands: Int, after step: ItemError.Step) throws(ItemError) {
        guard image.bands > 4, image.bands > bands else { return }
        throw ItemError(
            .processing, stage: .process,
            reason: "it made an image of \(image.bands) bands, where an encoder takes at most 4 (colour and alpha)", step: step)
    }

    /// What `step` threw, as its output's failure. A `CancellationError` too, and not kept as
    /// the underlying error, where it would read as the run's cancel: a step runs on a lane of
    /// its own, which a run's cancel does not reach, so the error is the step's own (its
    /// `Task.checkCancellation()` in a task of its own, say).
    private static func failure(of step: ItemError.Step, _ error: any Error) -> ItemError {
        guard !(error is CancellationError) else {
            return ItemError(
                .processing, stage: .process, reason: "it threw CancellationError, though the run was not cancelled", step: step)
        }
        return ItemError(.processing, stage: .process, reason: ItemError.reason(for: error), step: step, underlying: error)
    }

    private static func failure(_ error: any Error) -> ItemError {
        ItemError(.processing, stage: .process, reason: ItemError.reason(for: error), underlying: error)
    }
}
