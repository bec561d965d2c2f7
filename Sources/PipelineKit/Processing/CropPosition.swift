import Vips

/// Which part of an image a crop keeps (a `cover` resize's `position`, a `crop` window's
/// `gravity`): a `Gravity`, a fixed focal point, the input's own point from the pipeline's focus
/// file, or the faces found in the image.
public enum CropPosition: Hashable, Sendable {
    /// A compass point or a smart strategy (`attention`, `entropy`).
    case gravity(Gravity)
    /// A point of the image the step gets (the upright image, for a first step), as fractions
    /// of its width and height, kept as near the crop's centre as the crop allows. Unlike
    /// `focus`, it is not moved by the steps before: it is the same point of every input.
    case point(FocusPoint)
    /// Each input's point from the `focusPoints` file (`ProcessingContext.focusPoint`); the
    /// centre for an input the file has no point for.
    case focus
    /// The faces found in the image (`FaceFinding`); `attention` when none is found.
    case faces

    /// The names a pipeline file may give `position`: the gravities, `focus` and `faces`.
    public static let names: [String] = Gravity.names + ["focus", "faces"]

    /// The position `name` stands for, or nil for an unknown name.
    public init?(name: String) {
        switch name {
        case "focus": self = .focus
        case "faces": self = .faces
        default:
            guard let gravity = Gravity(name: name) else { return nil }
            self = .gravity(gravity)
        }
    }

    /// The position in a step's identifier: a gravity's name as before, so that journals
    /// of files made before points existed still match.
    public var identifier: String {
        switch self {
        case .gravity(let gravity): gravity.rawValue
        case .point(let point): "point(\(point.x),\(point.y))"
        case .focus: "focus"
        case .faces: "faces"
        }
    }

    /// The gravity, or nil for a point, the focus file or faces.
    public var gravity: Gravity? {
        if case .gravity(let gravity) = self { gravity } else { nil }
    }

    /// The shape of a `position` option: a name, or `{"x": X, "y": Y}` with fractions 0…1.
    public static let shape = ValueShape.anyOf([
        .choice(names),
        .object([
            .number("x", in: 0...1, required: true, help: "the point's distance from the left edge, as a fraction of the width"),
            .number("y", in: 0...1, required: true, help: "the point's distance from the top edge, as a fraction of the height"),
        ]),
    ])
}

/// A point of an upright image, as fractions of its width (`x`, from the left) and height
/// (`y`, from the top), each 0…1.
public struct FocusPoint: Hashable, Sendable, CustomStringConvertible {
    /// The distance from the left edge, as a fraction of the width.
    public let x: Double
    /// The distance from the top edge, as a fraction of the height.
    public let y: Double

    /// The point at `x`, `y`; nil when either is outside 0…1 (or not a number).
    public init?(x: Double, y: Double) {
        guard (0...1).contains(x), (0...1).contains(y) else { return nil }
        self.x = x
        self.y = y
    }

    /// The centre of the image.
    public static let centre = FocusPoint(checked: 0.5, 0.5)

    private init(checked x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    /// `(x, y)`, as messages quote it.
    public var description: String { "(\(x), \(y))" }
}

/// A rectangle in an image's pixels.
public struct PixelBox: Hashable, Sendable {
    /// The left edge.
    public var left: Int
    /// The top edge.
    public var top: Int
    /// The width.
    public var width: Int
    /// The height.
    public var height: Int

    /// A box at `left`, `top` of `width` by `height` pixels.
    public init(left: Int, top: Int, width: Int, height: Int) {
        self.left = left
        self.top = top
        self.width = width
        self.height = height
    }

    /// The smallest box holding every one of `boxes`; nil for none.
    public static func union(_ boxes: [PixelBox]) -> PixelBox? {
        guard let first = boxes.first else { return nil }
        let left = boxes.map(\.left).min() ?? first.left
        let top = boxes.map(\.top).min() ?? first.top
        let right = boxes.map { $0.left + $0.width }.max() ?? first.left + first.width
        let bottom = boxes.map { $0.top + $0.height }.max() ?? first.top + first.height
        return PixelBox(left: left, top: top, width: right - left, height: bottom - top)
    }
}

extension CropPosition {
    /// The top-left corner of a crop `window` in `container` that puts the point at fractions
    /// `centre` of the container as near the window's centre as the window allows: centred on
    /// it, then moved back inside the container.
    public static func origin(
        of window: (width: Int, height: Int), in container: (width: Int, height: Int), centredOn centre: (x: Double, y: Double)
    ) -> (left: Int, top: Int) {
        func place(_ size: Int, _ length: Int, _ fraction: Double) -> Int {
            let ideal = Int((fraction * Double(length) - Double(size) / 2).rounded())
            return min(max(0, ideal), max(0, length - size))
        }
        return (place(window.width, container.width, centre.x), place(window.height, container.height, centre.y))
    }
}

extension ProcessorOptions {
    /// The position option `name` as written: a position's name, or `{"x": X, "y": Y}`; the
    /// centre when it is not given. `faces` needs the build's face detector.
    public func cropPosition(_ name: String) throws(OptionError) -> CropPosition {
        guard let node = value(name) else { return .gravity(.centre) }
        let position: CropPosition
        switch node.value {
        case .string(let text):
            guard let named = CropPosition(name: text) else {
                throw OptionError(option: name, "unknown value \(text.quotedValue)")
            }
            position = named
        case .object:
            guard case .number(let x, _)? = node["x"]?.value, case .number(let y, _)? = node["y"]?.value,
                let point = FocusPoint(x: x, y: y)
            else {
                throw OptionError(option: name, "a point is {\"x\": X, \"y\": Y}, each a fraction from 0 to 1")
            }
            position = .point(point)
        default:
            throw OptionError(option: name, "expected a position's name or {\"x\": X, \"y\": Y}")
        }
        if position == .faces, faceFinder == nil {
            throw OptionError(
                option: name, "\"faces\" needs face detection, and this build of pipeline has none (it was built without the Faces trait)")
        }
        if position == .faces, let reason = faceFinder?.unavailableReason {
            throw OptionError(option: name, "\"faces\" needs face detection, which cannot work here: \(reason)")
        }
        return position
    }
}

extension CropPosition {
    /// The point a crop to `window` of an image of `image` size (scaled to `scaled`) centres
    /// on: the middle of the box around every face, or of the largest face when they do not
    /// all fit in the window; nil when there are no faces.
    public static func facePoint(_ faces: [PixelBox], in image: ImageSize, keeping window: ImageSize, scaledTo scaled: ImageSize)
        -> FocusPoint?
    {
        faceCrop(faces, in: image, keeping: window, scaledTo: scaled)?.point
    }

    /// `facePoint`'s point, and whether the window holds every face (else the point is the
    /// largest face's), for the crop's note to say which.
    static func faceCrop(_ faces: [PixelBox], in image: ImageSize, keeping window: ImageSize, scaledTo scaled: ImageSize)
        -> (point: FocusPoint, holdsEvery: Bool)?
    {
        guard let all = PixelBox.union(faces), image.width > 0, image.height > 0 else { return nil }
        let fits =
            Double(all.width) * Double(scaled.width) / Double(image.width) <= Double(window.width)
            && Double(all.height) * Double(scaled.height) / Double(image.height) <= Double(window.height)
        let box = fits ? all : faces.max { $0.width * $0.height < $1.width * $1.height } ?? all
        let point = FocusPoint(
            x: min(1, max(0, (Double(box.left) + Double(box.width) / 2) / Double(image.width))),
            y: min(1, max(0, (Double(box.top) + Double(box.height) / 2) / Double(image.height))))
        return point.map { ($0, fits) }
    }
}

extension VipsImage {
    /// Crops to `width`×`height`, clamped to the image, keeping the part `position` names: the
    /// input's focus point from `context`, or the faces `faceFinder` finds in `original` (this
    /// image before a step scaled it; the image itself when nil). Without a face, or without a
    /// finder, the crop is attention's, and `context`'s notes say which it was.
    public func cropped(
        width: Int, height: Int, at position: CropPosition, faceFinder: (any FaceFinding)?, facesIn original: VipsImage? = nil,
        context: ProcessingContext
    ) throws -> VipsImage {
        switch position {
        case .gravity(let gravity):
            return try cropped(width: width, height: height, gravity: gravity)
        case .point(let point):
            return try cropped(width: width, height: height, around: point)
        case .focus:
            return try cropped(width: width, height: height, around: context.focusPoint ?? .centre)
        case .faces:
            let window = ImageSize(width: min(max(1, width), self.width), height: min(max(1, height), self.height))
            // A window the size of the image keeps it all: no face needs finding.
            if window == size { return self }
            guard let faceFinder else { return try cropped(width: width, height: height, gravity: .attention) }
            let searched = original ?? self
            let faces = try faceFinder.faces(in: searched)
            guard let crop = CropPosition.faceCrop(faces, in: searched.size, keeping: window, scaledTo: size) else {
                context.notes.add("no face found: cropped by attention")
                return try cropped(width: width, height: height, gravity: .attention)
            }
            context.notes.add(
                faces.count == 1
                    ? "1 face found: cropped about it"
                    : crop.holdsEvery
                        ? "\(faces.count) faces found: cropped about them"
                        : "\(faces.count) faces found, too far apart for the crop: cropped about the largest")
            return try cropped(width: width, height: height, around: crop.point)
        }
    }

    /// Crops to `width`×`height`, clamped to the image, keeping the point at fractions
    /// `point` of the image as near the window's centre as the window allows.
    public func cropped(width: Int, height: Int, around point: FocusPoint) throws(VipsError) -> VipsImage {
        let window = (width: min(max(1, width), self.width), height: min(max(1, height), self.height))
        if window == (self.width, self.height) { return self }
        let (left, top) = CropPosition.origin(of: window, in: (self.width, self.height), centredOn: (point.x, point.y))
        return try extracted(left: left, top: top, width: window.width, height: window.height)
    }
}

extension VipsImage {
    /// Every frame of an animation (pages of `pageHeight` rows) cropped to one window, placed
    /// as `cropped(width:height:at:faceFinder:facesIn:context:)` places it on the first frame
    /// (`original`: that frame before a step scaled it): a window of its own for each frame
    /// would make a smart crop jump about as the picture moves.
    public func croppedFramesAlike(
        width: Int, height: Int, at position: CropPosition, faceFinder: (any FaceFinding)?, facesIn original: VipsImage?,
        context: ProcessingContext
    ) throws -> VipsImage {
        let first = try extracted(left: 0, top: 0, width: self.width, height: pageHeight)
        let window = try first.cropped(
            width: width, height: height, at: position, faceFinder: faceFinder, facesIn: original, context: context)
        if window.size == first.size { return self }
        guard let (left, top) = window.extractedCorner, left <= first.width - window.width, top <= first.height - window.height else {
            throw VipsError(operation: "extract_area", message: "the first frame's crop did not say where in the frame it was")
        }
        return try croppedPages(left: left, top: top, width: window.width, height: window.height)
    }
}

extension VipsImage {
    /// Where in its source an extract (a crop, smart ones too) took this image: libvips keeps
    /// it, negated, as the image's offset. nil when the offset cannot be such a corner.
    var extractedCorner: (left: Int, top: Int)? {
        guard let xOffset = intField("xoffset"), let yOffset = intField("yoffset"), xOffset <= 0, yOffset <= 0 else { return nil }
        return (-xOffset, -yOffset)
    }
}
