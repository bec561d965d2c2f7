import PipelineKit
import Vips

extension Resize {
    /// The `position` option as written: a name, or `{"x": X, "y": Y}`.
    static func position(_ options: ProcessorOptions) throws(OptionError) -> CropPosition {
        guard let node = options.value("position") else { return .gravity(.centre) }
        switch node.value {
        case .string(let name):
            guard let position = CropPosition(name: name) else {
                throw OptionError(option: "position", "unknown value \(name.quotedValue)")
            }
            return position
        case .object:
            guard case .number(let x, _)? = node["x"]?.value, case .number(let y, _)? = node["y"]?.value,
                let point = FocusPoint(x: x, y: y)
            else {
                throw OptionError(option: "position", "a point is {\"x\": X, \"y\": Y}, each a fraction from 0 to 1")
            }
            return .point(point)
        default:
            throw OptionError(option: "position", "expected a position's name or {\"x\": X, \"y\": Y}")
        }
    }

    /// Whether the step crops about each input's point from the focus file.
    public var readsFocusPoint: Bool { position == .focus }

    /// The top-left corner of a cover crop's `window` in the scaled image, when the position
    /// fixes it without looking at the pixels (a compass point, a point, the input's `focus`
    /// point: nil for that when the input is not known, as in planning); nil for smart
    /// positions and faces.
    func fixedOrigin(
        of window: (width: Int, height: Int), in container: (width: Int, height: Int), focus: FocusPoint??
    ) -> (left: Int, top: Int)? {
        switch position {
        case .gravity(let gravity):
            return gravity.interest == nil ? gravity.origin(of: window, in: container) : nil
        case .point(let point):
            return CropPosition.origin(of: window, in: container, centredOn: (point.x, point.y))
        case .focus:
            guard let focus else { return nil }
            let point = focus ?? .centre
            return CropPosition.origin(of: window, in: container, centredOn: (point.x, point.y))
        case .faces:
            return nil
        }
    }

    /// `scaled` cropped to `size` at the position; `input`, the step's unscaled input, is
    /// where faces are looked for.
    func coverCrop(_ scaled: VipsImage, from input: VipsImage, to size: ImageSize, context: ProcessingContext) throws -> VipsImage {
        switch position {
        case .gravity(let gravity):
            return try scaled.cropped(width: size.width, height: size.height, gravity: gravity)
        case .point(let point):
            return try scaled.cropped(width: size.width, height: size.height, around: point)
        case .focus:
            return try scaled.cropped(width: size.width, height: size.height, around: context.focusPoint ?? .centre)
        case .faces:
            guard let finder = faceFinder?.finder else {
                return try scaled.cropped(width: size.width, height: size.height, gravity: .attention)
            }
            let faces = try finder.faces(in: input)
            guard let point = Self.facePoint(faces, in: input.size, keeping: size, scaledTo: scaled.size) else {
                context.notes.add("no face found: cropped by attention")
                return try scaled.cropped(width: size.width, height: size.height, gravity: .attention)
            }
            context.notes.add("\(faces.count) face\(faces.count == 1 ? "" : "s") found: cropped about them")
            return try scaled.cropped(width: size.width, height: size.height, around: point)
        }
    }

    /// The point a crop to `window` of an image of `image` size (scaled to `scaled`) centres
    /// on: the middle of the box around every face, or of the largest face when they do not
    /// all fit in the window; nil when there are no faces.
    static func facePoint(_ faces: [PixelBox], in image: ImageSize, keeping window: ImageSize, scaledTo scaled: ImageSize)
        -> FocusPoint?
    {
        guard let all = PixelBox.union(faces), image.width > 0, image.height > 0 else { return nil }
        let fits =
            Double(all.width) * Double(scaled.width) / Double(image.width) <= Double(window.width)
            && Double(all.height) * Double(scaled.height) / Double(image.height) <= Double(window.height)
        let box = fits ? all : faces.max { $0.width * $0.height < $1.width * $1.height } ?? all
        return FocusPoint(
            x: min(1, max(0, (Double(box.left) + Double(box.width) / 2) / Double(image.width))),
            y: min(1, max(0, (Double(box.top) + Double(box.height) / 2) / Double(image.height))))
    }
}

/// The face detector a resize holds: every one is the same as far as the step's equality and
/// identifier go, since the build has one.
struct FaceFinderReference: Hashable, Sendable {
    let finder: any FaceFinding

    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
