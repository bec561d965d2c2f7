public import PipelineKit
public import Vips

/// Cuts a rectangle out of an image: either a fixed region (`left`, `top`, `width`, `height`)
/// or a window of `width`×`height` placed by `gravity`: a compass point, a smart crop, a focal
/// point, the input's point from the focus file, or the faces found, as a cover resize's
/// `position` places its crop.
///
/// A region must lie inside the image, or the item fails: cropping a different rectangle than
/// the one asked for would hide a mistake. A window larger than the image is clamped to it, so
/// one pipeline can serve images of any size. A window with only `width` (or only `height`)
/// keeps the image's full height (or width).
public struct Crop: ImageProcessing, Hashable {
    /// The step's key in a pipeline file.
    public static let name = "crop"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary = "Cuts out a region (left, top, width, height) or a width×height window placed by gravity."

    /// What to cut out.
    public enum Mode: Hashable, Sendable {
        /// A fixed rectangle, which must lie inside the image.
        case region(left: Int, top: Int, width: Int, height: Int)
        /// A window of at most `width`×`height` (nil: the image's own), placed at `position`.
        case window(width: Int?, height: Int?, position: CropPosition)
    }

    /// Offsets and sizes up to libvips' own coordinate limit, `VIPS_MAX_COORD`.
    public static let offsetRange = 0...10_000_000
    /// Region and window sizes, from a pixel up to libvips' coordinate limit.
    public static let sizeRange = 1...10_000_000

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        .integer("left", in: offsetRange, help: "Left edge of a region, in pixels from the left (needs top, width and height)."),
        .integer("top", in: offsetRange, help: "Top edge of a region, in pixels from the top (needs left, width and height)."),
        .integer(
            "width", in: sizeRange,
            help: "Width of the region or window in pixels. A window wider than the image keeps the image's width; a region must fit."),
        .integer(
            "height", in: sizeRange,
            help: "Height of the region or window in pixels. A window taller than the image keeps the image's height; a region must fit."),
        Option(
            "gravity", CropPosition.shape, default: JSONNode(plain: Gravity.centre.rawValue),
            help:
                "Where a window without left/top sits: a compass point, attention/entropy for a smart crop, a point "
                + "{\"x\": 0.8, \"y\": 0.4} (fractions of the image the step gets) kept as near the centre as the window allows, focus for each "
                + "input's point from the focusPoints file, or faces for the faces found (attention when none is)."),
    ]

    /// What is kept: a region at fixed pixels, or a window placed by gravity.
    public let mode: Mode
    /// The face detector for a window at `"gravity": "faces"`.
    let faceFinder: FaceFinderReference?

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        let left = try options.optionalInt("left")
        let top = try options.optionalInt("top")
        let width = try options.optionalInt("width")
        let height = try options.optionalInt("height")
        if left != nil || top != nil {
            if options.has("gravity") {
                throw OptionError(option: "gravity", "cannot be combined with left and top: a region is placed by its coordinates")
            }
            let region = "a region crop needs left, top, width and height"
            guard let left else { throw OptionError(option: "left", "is required: \(region)") }
            guard let top else { throw OptionError(option: "top", "is required: \(region)") }
            guard let width else { throw OptionError(option: "width", "is required: \(region)") }
            guard let height else { throw OptionError(option: "height", "is required: \(region)") }
            try self.init(mode: .region(left: left, top: top, width: width, height: height))
        } else {
            let position = try options.cropPosition("gravity")
            try self.init(mode: .window(width: width, height: height, position: position), faceFinder: options.faceFinder)
        }
    }

    /// A crop for use from Swift; checks what the pipeline file's validator would. A window
    /// about faces needs `faceFinder`.
    public init(mode: Mode, faceFinder: (any FaceFinding)? = nil) throws(OptionError) {
        switch mode {
        case .region(let left, let top, let width, let height):
            try Self.check("left", left, in: Self.offsetRange)
            try Self.check("top", top, in: Self.offsetRange)
            try Self.check("width", width, in: Self.sizeRange)
            try Self.check("height", height, in: Self.sizeRange)
        case .window(let width, let height, let position):
            if position == .faces, faceFinder == nil {
                throw OptionError(option: "gravity", "\"faces\" needs a face finder")
            }
            guard width != nil || height != nil else {
                throw OptionError(
                    option: nil, "crop needs width and/or height (a window placed by gravity), or left, top, width and height (a region)")
            }
            if let width { try Self.check("width", width, in: Self.sizeRange) }
            if let height { try Self.check("height", height, in: Self.sizeRange) }
        }
        self.mode = mode
        self.faceFinder = mode.position == .faces ? faceFinder.map(FaceFinderReference.init) : nil
    }

    private static func check(_ name: String, _ value: Int, in range: ClosedRange<Int>) throws(OptionError) {
        guard range.contains(value) else {
            throw OptionError(option: name, "must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        switch mode {
        case .region(let left, let top, let width, let height):
            "crop(left:\(left),top:\(top),width:\(width),height:\(height))"
        case .window(let width, let height, let position):
            "crop(width:\(width.map(String.init) ?? "auto"),height:\(height.map(String.init) ?? "auto"),gravity:\(position.identifier))"
        }
    }

    /// Whether the window is placed at each input's point from the focus file.
    public var readsFocusPoint: Bool { mode.position == .focus }

    /// The size this step makes from an input of `size`, so that planning can size decoding.
    public func outputSize(for size: ImageSize) -> ImageSize {
        switch mode {
        case .region(_, _, let width, let height):
            // An image the region does not fit fails in `process`; the planner needs no other answer.
            ImageSize(width: width, height: height)
        case .window(let width, let height, _):
            ImageSize(width: min(width ?? size.width, size.width), height: min(height ?? size.height, size.height))
        }
    }

    /// The point in what is kept: a region's, or a window's placed at a compass point, a
    /// point or the focus point itself. A smart crop and faces place the window by the pixels,
    /// which the sizes alone do not tell, and leave the point be.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        switch mode {
        case .region(let left, let top, let width, let height):
            return point.seen(through: PixelBox(left: left, top: top, width: width, height: height), of: input)
        case .window(_, _, let position):
            let window = (width: result.width, height: result.height)
            let container = (width: input.width, height: input.height)
            let corner: (left: Int, top: Int)
            switch position {
            case .gravity(let gravity) where gravity.interest == nil: corner = gravity.origin(of: window, in: container)
            case .point(let centre): corner = CropPosition.origin(of: window, in: container, centredOn: (centre.x, centre.y))
            case .focus: corner = CropPosition.origin(of: window, in: container, centredOn: (point.x, point.y))
            case .gravity, .faces: return point
            }
            return point.seen(through: PixelBox(left: corner.left, top: corner.top, width: window.width, height: window.height), of: input)
        }
    }

    /// Every frame of an animation cropped to one window, placed as on the first frame (a
    /// window of its own for each would make a smart crop jump about); nil for a region, which
    /// is the same on every frame already.
    public func processFrames(_ frames: VipsImage, context: ProcessingContext) throws -> VipsImage? {
        guard case .window(_, _, let position) = mode else { return nil }
        let size = outputSize(for: ImageSize(width: frames.width, height: frames.pageHeight))
        return try frames.croppedFramesAlike(
            width: size.width, height: size.height, at: position, faceFinder: faceFinder?.finder, facesIn: nil, context: context)
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        switch mode {
        case .region(let left, let top, let width, let height):
            // The options' ranges keep these sums far from overflow.
            guard left + width <= image.width, top + height <= image.height else {
                throw RegionOutsideImage(left: left, top: top, width: width, height: height, imageSize: image.size)
            }
            if (left, top, width, height) == (0, 0, image.width, image.height) { return image }
            return try image.extracted(left: left, top: top, width: width, height: height)
        case .window(_, _, let position):
            let size = outputSize(for: image.size)
            return try image.cropped(width: size.width, height: size.height, at: position, faceFinder: faceFinder?.finder, context: context)
        }
    }
}

extension Crop.Mode {
    /// Where a window sits; nil for a region.
    public var position: CropPosition? {
        if case .window(_, _, let position) = self { position } else { nil }
    }
}

extension Crop {
    /// A crop region that does not lie inside the image; the item fails.
    public struct RegionOutsideImage: Error, Sendable, Equatable, CustomStringConvertible {
        /// The region's left edge, in pixels.
        public let left: Int
        /// The region's top edge, in pixels.
        public let top: Int
        /// The region's width, in pixels.
        public let width: Int
        /// The region's height, in pixels.
        public let height: Int
        /// The size of the image the region was asked of.
        public let imageSize: ImageSize

        /// The message the item fails with, naming the region and the image's size.
        public var description: String {
            "the crop region \(width)×\(height) at left \(left), top \(top) does not fit inside the \(imageSize) image"
        }
    }
}
