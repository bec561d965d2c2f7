import Vips

/// The process stage's work for one output: its steps, in order, on the decoded image, and
/// the result computed into memory (so the work is done here, not lazily in the encoder).
struct StepChain: Sendable {
    let steps: [any ImageProcessing]
    /// Whether every frame of an animation is kept (an animated GIF or WebP output) or only the first.
    let keepsEveryFrame: Bool

    init(_ output: OutputDefinition) {
        steps = output.steps
        keepsEveryFrame = output.animates
    }

    /// The output at `outputIndex` (in the run's outputs) made from `decoded`: from the window
    /// decoded for it, when it has one.
    func apply(to decoded: DecodedImage, outputIndex: Int, context: ProcessingContext) throws(ItemError) -> VipsImage {
        guard decoded.frameCount > 1 else {
            return try rendered(apply(to: decoded.image(forOutput: outputIndex), context: context))
        }
        // An animation's steps run frame by frame, so a crop crops each frame and a resize
        // resizes each; the frames are stacked again, one page a frame.
        let frames: [VipsImage]
        do {
            frames = try Array(decoded.image.pages().prefix(keepsEveryFrame ? Int.max : 1))
        } catch {
            throw Self.failure(error)
        }
        var processed: [VipsImage] = []
        for frame in frames {
            processed.append(try apply(to: frame, context: context))
        }
        guard Set(processed.map(\.size)).count == 1 else {
            throw ItemError(.processing, stage: .process, reason: "the steps made frames of different sizes")
        }
        guard processed.count > 1 else { return try rendered(processed[0]) }
        let joined: VipsImage
        do {
            joined = try Self.withAnimationFields(of: decoded.image, frames: processed.count, on: VipsImage.joiningPages(processed))
        } catch {
            throw Self.failure(error)
        }
        // Everything the steps made, frames together, counted as a still image's result is.
        if joined.size.pixelCount > context.maxPixels {
            throw ItemError(
                .tooManyPixels, stage: .process,
                reason: "the \(processed.count) frames would be \(joined.size), "
                    + "more than the \(context.maxPixels) pixels decompress.maxPixels allows")
        }
        return try rendered(joined)
    }

    /// `image` with the frame delays and loop count of the `decoded` animation, which a step
    /// that makes a new image (rather than changing one) would otherwise leave behind: the
    /// GIF and WebP savers read them from the image.
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

    private func apply(to image: VipsImage, context: ProcessingContext) throws(ItemError) -> VipsImage {
        var image = image
        for (index, step) in steps.enumerated() {
            let named = ItemError.Step(index: index, name: type(of: step).name)
            do {
                image = try step.process(image, context: context)
            } catch {
                throw ItemError(.processing, stage: .process, reason: ItemError.reason(for: error), step: named, underlying: error)
            }
            // A step may grow the image (extend, rotate, vips): the header says by how much
            // before any pixel is computed, so refuse what decoding would have refused.
            if image.size.pixelCount > context.maxPixels {
                throw ItemError(
                    .tooManyPixels, stage: .process,
                    reason: "the result would be \(image.size), "
                        + "more than the \(context.maxPixels) pixels decompress.maxPixels allows", step: named)
            }
        }
        return image
    }

    private func rendered(_ image: VipsImage) throws(ItemError) -> VipsImage {
        do {
            return try image.rendered()
        } catch {
            throw Self.failure(error)
        }
    }

    private static func failure(_ error: any Error) -> ItemError {
        ItemError(.processing, stage: .process, reason: ItemError.reason(for: error), underlying: error)
    }
}
