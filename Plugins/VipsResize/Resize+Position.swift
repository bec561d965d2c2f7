import PipelineKit
import Vips

extension Resize {
    /// Whether the step crops about each input's point from the focus file: only a box (width
    /// and height) has room to place the image, so a width or a height alone never reads it.
    public var readsFocusPoint: Bool { position == .focus && width != nil && height != nil }

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
        try scaled.cropped(
            width: size.width, height: size.height, at: position, faceFinder: faceFinder?.finder, facesIn: input, context: context)
    }
}
