public import PipelineKit
public import Vips

/// Scales an image to a width, a height or a box, with sharp's `fit` modes.
///
/// - `cover`: scale so the image covers the box, then crop to exactly the box (at `position`);
/// - `contain`: scale so the image fits inside the box, then letterbox it on `background` to
///   exactly the box (placed at `position`; smart positions centre it);
/// - `fill`: stretch to exactly the box, ignoring the aspect ratio;
/// - `inside`: scale so the image fits inside the box, aspect kept (result ≤ the box);
/// - `outside`: scale so the image covers the box, aspect kept, no crop (result ≥ the box).
///
/// With only `width` or only `height`, the image is scaled to it with its aspect ratio kept,
/// whatever `fit` says. `withoutEnlargement` clamps the scale to 1: `cover` then crops to at
/// most the box, and `contain` letterboxes the unscaled image on the box, as sharp does.
public struct Resize: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "resize"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Scales to a width, a height or a box (fit: cover, contain, fill, inside, outside)."

    /// How the image is fitted to a box given by both `width` and `height`.
    public enum Fit: String, CaseIterable, Sendable {
        /// `cover` fills the box and crops; `contain` fits inside it and letterboxes; `fill`
        /// stretches to it; `inside` fits within it; `outside` covers it without cropping.
        case cover, contain, fill, inside, outside
    }

    /// The sizes a resize may ask for, in pixels.
    public static let sizeRange = 1...100_000

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .integer("width", in: sizeRange, help: "Target width in pixels. With only width, the height keeps the aspect ratio."),
        .integer("height", in: sizeRange, help: "Target height in pixels. With only height, the width keeps the aspect ratio."),
        .choice(
            "fit", Fit.self, default: .cover,
            help: "How to fit a width×height box: cover (crop), contain (letterbox), fill (stretch), inside (≤ box), outside (≥ box)."),
        Option(
            "position", CropPosition.shape, default: JSONNode(plain: Gravity.centre.rawValue),
            help:
                "Which part cover keeps: a compass point, attention/entropy for a smart crop, a point {\"x\": 0.8, \"y\": 0.4} "
                + "(fractions of the image the step gets) kept as near the centre as the crop allows, focus for each input's point from "
                + "the focusPoints file, or faces for the faces found (attention when none is); where contain places the image. "
                + "Not with the other fits, which show the whole image; with width or height alone it places nothing (a warning)."),
        .choice("kernel", VipsImage.Kernel.self, default: .lanczos3, help: "The resampling kernel."),
        .boolean("withoutEnlargement", default: false, help: "Never scale up: an image smaller than the target keeps its size."),
        .colour(
            "background", default: "#000000", help: "The letterbox colour for contain; a colour with alpha gives the image an alpha band."),
    ]

    /// The target width, or nil to follow the height.
    public let width: Int?
    /// The target height, or nil to follow the width.
    public let height: Int?
    /// How the image is fitted to a box given by both `width` and `height`.
    public let fit: Fit
    /// Which part `cover` keeps, or where `contain` places the image (centred, for a position
    /// other than a compass point).
    public let position: CropPosition
    /// The resampling kernel.
    public let kernel: VipsImage.Kernel
    /// Whether an image smaller than the target keeps its size.
    public let withoutEnlargement: Bool
    /// The letterbox colour as red, green, blue and alpha, 0–255.
    public let background: [Double]
    /// The face detector for `"position": "faces"`.
    let faceFinder: FaceFinderReference?

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        let position = try options.cropPosition("position")
        let fit = try options.choice("fit", as: Fit.self)
        // A position the fit never uses is a mistake to name, not a choice to ignore.
        if options.has("position"), fit != .cover, fit != .contain {
            throw OptionError(
                option: "position",
                "places the image only with fit cover (the part kept) or contain (where it sits in the box); "
                    + "fit \(fit.rawValue) shows the whole image")
        }
        try self.init(
            width: options.optionalInt("width"),
            height: options.optionalInt("height"),
            fit: fit,
            position: position,
            kernel: options.choice("kernel", as: VipsImage.Kernel.self),
            withoutEnlargement: options.bool("withoutEnlargement"),
            background: options.colour("background"),
            faceFinder: options.faceFinder
        )
    }

    /// A resize for use from Swift; checks what the pipeline file's validator would.
    ///
    /// - Parameter background: red, green, blue and optionally alpha, 0–255.
    public init(
        width: Int? = nil,
        height: Int? = nil,
        fit: Fit = .cover,
        position: CropPosition = .gravity(.centre),
        kernel: VipsImage.Kernel = .lanczos3,
        withoutEnlargement: Bool = false,
        background: [Double] = [0, 0, 0, 255],
        faceFinder: (any FaceFinding)? = nil
    ) throws(OptionError) {
        if position == .faces, faceFinder == nil {
            throw OptionError(option: "position", "\"faces\" needs a face finder")
        }
        guard width != nil || height != nil else {
            throw OptionError(option: nil, "resize needs width or height (or both)")
        }
        for (name, value) in [("width", width), ("height", height)] {
            if let value, !Self.sizeRange.contains(value) {
                throw OptionError(option: name, "must be between \(Self.sizeRange.lowerBound) and \(Self.sizeRange.upperBound)")
            }
        }
        guard background.count == 3 || background.count == 4, background.allSatisfy({ (0...255).contains($0) }) else {
            throw OptionError(option: "background", "expected 3 or 4 components between 0 and 255")
        }
        self.width = width
        self.height = height
        self.fit = fit
        self.position = position
        self.kernel = kernel
        self.withoutEnlargement = withoutEnlargement
        self.background = background.count == 3 ? background + [255] : background
        self.faceFinder = position == .faces ? faceFinder.map(FaceFinderReference.init) : nil
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        let hex = background.map { component in
            let text = String(Int(component.rounded()), radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
        return "resize(width:\(width.map(String.init) ?? "auto"),height:\(height.map(String.init) ?? "auto"),"
            + "fit:\(fit.rawValue),position:\(position.identifier),kernel:\(kernel.rawValue),"
            + "withoutEnlargement:\(withoutEnlargement),background:#\(hex))"
    }

    /// The size this step makes from an input of `size`, so that planning can size decoding.
    public func outputSize(for size: ImageSize) -> ImageSize {
        geometry(for: size).output
    }

    /// The image scaled to cover the box, when the crop looks at all of it to choose its window
    /// (attention, entropy, faces); the output otherwise, as libvips computes only the window
    /// a fixed position keeps.
    public func workingSize(for size: ImageSize) -> ImageSize {
        let geometry = geometry(for: size)
        let output = (geometry.output.width, geometry.output.height), scaled = (geometry.scaled.width, geometry.scaled.height)
        guard fit == .cover, geometry.output != geometry.scaled, fixedOrigin(of: output, in: scaled, focus: .some(nil)) == nil else {
            return geometry.output
        }
        return geometry.scaled
    }

    /// How much smaller the decoder may make the input: as much as this resize shrinks it, so
    /// that the result is the same up to resampling. A crop about faces searches the image
    /// before the resize, so it keeps the long side the face finder searches at: shrunk to the
    /// size of a small thumbnail, the faces would be too small for it to find.
    public func allowedInputShrink(for size: ImageSize) -> Double {
        let geometry = geometry(for: size)
        guard let finder = faceFinder?.finder, geometry.output != geometry.scaled else { return geometry.inputShrink }
        let searchedShrink = Double(max(size.width, size.height)) / Double(max(1, finder.searchSize))
        return max(1, min(geometry.inputShrink, searchedShrink))
    }

    /// A cover crop at a compass position or a fixed point keeps a window of the input: the
    /// scaled image's crop, mapped back to input pixels (rounded outwards). Smart positions,
    /// faces and each input's focus point look at (or depend on) the whole image.
    public func decodeWindow(for size: ImageSize) -> DecodeWindow? {
        let geometry = geometry(for: size)
        guard fit == .cover, geometry.output != geometry.scaled,
            let (left, top) = fixedOrigin(
                of: (geometry.output.width, geometry.output.height), in: (geometry.scaled.width, geometry.scaled.height), focus: nil)
        else { return nil }
        let horizontal = Double(size.width) / Double(geometry.scaled.width)
        let vertical = Double(size.height) / Double(geometry.scaled.height)
        let x0 = Int((Double(left) * horizontal).rounded(.down))
        let y0 = Int((Double(top) * vertical).rounded(.down))
        let x1 = min(size.width, Int((Double(left + geometry.output.width) * horizontal).rounded(.up)))
        let y1 = min(size.height, Int((Double(top + geometry.output.height) * vertical).rounded(.up)))
        return DecodeWindow(left: x0, top: y0, width: max(1, x1 - x0), height: max(1, y1 - y0), size: geometry.output)
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let geometry = context.isDecodedImage ? geometry(for: image.size, decodedFrom: context.originalSize) : geometry(for: image.size)
        guard geometry.isWithinLibvipsLimits else {
            throw TooLarge(input: image.size, scaled: geometry.scaled, output: geometry.output)
        }
        try checkLooksWithinLimits(at: geometry, input: image.size, context: context)
        let result = try image.resampled(to: geometry.scaled, kernel: kernel)
        guard geometry.output != geometry.scaled else { return result }
        switch fit {
        case .cover:
            return try coverCrop(result, from: image, to: geometry.output, context: context)
        case .contain:
            return try letterboxed(result, into: geometry.output)
        case .fill, .inside, .outside:
            return result  // these modes never crop or embed: geometry.output == geometry.scaled
        }
    }

    /// Every frame resampled at once (`VipsImage.resampledPages(to:kernel:)`), and cropped at
    /// once to one window: where the position fixes it, or where a smart crop or the faces put
    /// it on the first frame; nil, frame by frame, for a letterbox.
    public func processFrames(_ frames: VipsImage, context: ProcessingContext) throws -> VipsImage? {
        let geometry = geometry(for: ImageSize(width: frames.width, height: frames.pageHeight))
        let crops = geometry.output != geometry.scaled
        guard !crops || fit == .cover else { return nil }
        guard geometry.isWithinLibvipsLimits else {
            throw TooLarge(
                input: ImageSize(width: frames.width, height: frames.pageHeight), scaled: geometry.scaled, output: geometry.output)
        }
        try checkLooksWithinLimits(at: geometry, input: ImageSize(width: frames.width, height: frames.pageHeight), context: context)
        let result = try frames.resampledPages(to: geometry.scaled, kernel: kernel, stoppingWhen: { context.shouldStop })
        guard crops else { return result }
        let window = (
            width: min(max(1, geometry.output.width), geometry.scaled.width),
            height: min(max(1, geometry.output.height), geometry.scaled.height)
        )
        let origin = fixedOrigin(of: window, in: (geometry.scaled.width, geometry.scaled.height), focus: context.focusPoint)
        guard let (left, top) = origin else {
            let firstFrame = try frames.extracted(left: 0, top: 0, width: frames.width, height: frames.pageHeight)
            return try result.croppedFramesAlike(
                width: window.width, height: window.height, at: position, faceFinder: faceFinder?.finder, facesIn: firstFrame,
                context: context)
        }
        return try result.croppedPages(left: left, top: top, width: window.width, height: window.height)
    }

    /// Where an image of `scaled` size sits on a letterbox canvas of `size`.
    private func letterboxCorner(of scaled: ImageSize, in size: ImageSize) -> (left: Int, top: Int) {
        // A smart position has nothing to analyse in a letterbox: centre the image.
        let placement = position.gravity.flatMap { $0.interest == nil ? $0 : nil } ?? .centre
        return placement.embeddingOrigin(of: (scaled.width, scaled.height), in: (size.width, size.height))
    }

    /// The point in what a cover crop keeps, where the position fixes the window (a smart
    /// position and faces leave it be), or on a letterbox's canvas.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        let geometry = geometry(for: input)
        guard geometry.output != geometry.scaled else { return point }
        let scaled = (width: geometry.scaled.width, height: geometry.scaled.height)
        switch fit {
        case .cover:
            let window = (
                width: min(max(1, geometry.output.width), scaled.width), height: min(max(1, geometry.output.height), scaled.height)
            )
            guard let corner = fixedOrigin(of: window, in: scaled, focus: .some(point)) else { return point }
            return point.seen(
                through: PixelBox(left: corner.left, top: corner.top, width: window.width, height: window.height), of: geometry.scaled)
        case .contain:
            let corner = letterboxCorner(of: geometry.scaled, in: geometry.output)
            return point.seen(
                through: PixelBox(left: -corner.left, top: -corner.top, width: geometry.output.width, height: geometry.output.height),
                of: geometry.scaled)
        case .fill, .inside, .outside:
            return point
        }
    }

    /// Places `image` on a canvas of `size` filled with `background`.
    private func letterboxed(_ image: VipsImage, into size: ImageSize) throws(VipsError) -> VipsImage {
        let (image, fill) = try image.preparedForFill(with: background)
        let (left, top) = letterboxCorner(of: image.size, in: size)
        return try image.embedded(x: left, y: top, width: size.width, height: size.height, background: fill)
    }
}

extension Resize {
    /// Fails when a cover crop would look at the whole scaled image (a smart position, or faces
    /// and the smart crop they fall back to) and that image has more pixels than the run
    /// allows. A sliver enlarged to cover a box (a 3×100000 image to 200×200) is scaled to
    /// 200×6666667 first: a fixed position computes only the window it keeps, but looking at
    /// every pixel would hold gigabytes that no limit on the input counts.
    func checkLooksWithinLimits(at geometry: Geometry, input: ImageSize, context: ProcessingContext) throws(LooksTooFar) {
        guard fit == .cover, geometry.output != geometry.scaled, geometry.scaled.pixelCount > context.maxPixels,
            fixedOrigin(
                of: (geometry.output.width, geometry.output.height), in: (geometry.scaled.width, geometry.scaled.height),
                focus: context.focusPoint) == nil
        else { return }
        throw LooksTooFar(input: input, scaled: geometry.scaled, maxPixels: context.maxPixels)
    }

    /// A cover crop at a smart position (or faces) of an image that scales to more pixels than
    /// `decompress.maxPixels`: the item fails.
    public struct LooksTooFar: Error, Sendable, CustomStringConvertible {
        /// The size of the image the resize was given.
        public let input: ImageSize
        /// The size it scales to before the crop, which the position looks at whole.
        public let scaled: ImageSize
        /// The run's `decompress.maxPixels`.
        public let maxPixels: Int

        /// The message the item fails with, naming the sizes, the limit and a way out.
        public var description: String {
            "covering the box scales the \(input) image to \(scaled), more than the \(maxPixels) pixels decompress.maxPixels "
                + "allows, and this position looks at all of it; a compass position or a point crops without looking"
        }
    }

    /// A resize whose result libvips cannot represent (a side over 10,000,000 pixels); the item fails.
    public struct TooLarge: Error, Sendable, CustomStringConvertible {
        /// The size of the image the resize was given.
        public let input: ImageSize
        /// The size it would have scaled the image to.
        public let scaled: ImageSize
        /// The size of the result.
        public let output: ImageSize

        /// The message the item fails with, naming the sizes.
        public var description: String {
            "resizing \(input) would make a \(scaled) image, larger than libvips allows"
        }
    }
}
