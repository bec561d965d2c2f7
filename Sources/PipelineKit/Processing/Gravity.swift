import Vips

/// Where a crop window sits in a larger image: a compass point, or the part libvips' smart
/// crop finds most interesting.
///
/// Pipeline vocabulary that several plugins share (the `resize` step's cover crop and
/// letterbox, `crop`, `composite`): it lives here, not in the `Vips` wrapper, and not in one
/// plugin, because plugin modules must not depend on each other.
public enum Gravity: String, CaseIterable, Sendable {
    /// The centre, or a compass point: the window touches that edge or corner.
    case centre, north, northeast, east, southeast, south, southwest, west, northwest
    /// libvips' attention strategy: skin tones, saturated colour and edges.
    case attention
    /// libvips' entropy strategy: the most luminance variation.
    case entropy

    /// Every spelling accepted by `init(name:)`: the case names plus `center`.
    public static let names: [String] = allCases.map(\.rawValue) + ["center"]

    /// The gravity named `name`; `center` is accepted for `centre`, as sharp does.
    public init?(name: String) {
        self.init(rawValue: name == "center" ? "centre" : name)
    }

    /// The smart-crop strategy, or nil for a compass point.
    public var interest: VipsImage.Interest? {
        switch self {
        case .attention: .attention
        case .entropy: .entropy
        default: nil
        }
    }

    /// The top-left corner of a crop `window` in `container` (compass points only; smart
    /// strategies place it centrally here). The window must fit in the container.
    ///
    /// Centred along a side, an odd spare pixel is cut from the start: `(spare + 1) / 2`, as
    /// sharp's `CalculateCrop` does, so a cover crop keeps the same pixels as sharp's.
    public func origin(
        of window: (width: Int, height: Int), in container: (width: Int, height: Int)
    ) -> (left: Int, top: Int) {
        place(spare: (container.width - window.width, container.height - window.height)) { ($0 + 1) / 2 }
    }

    /// The top-left corner of an `image` embedded in a larger `canvas` (a letterbox): centred
    /// along a side, an odd spare pixel goes after the image, `spare / 2`, as sharp's
    /// `CalculateEmbedPosition` does (its rounding differs from its crop's).
    public func embeddingOrigin(
        of image: (width: Int, height: Int), in canvas: (width: Int, height: Int)
    ) -> (left: Int, top: Int) {
        place(spare: (canvas.width - image.width, canvas.height - image.height)) { $0 / 2 }
    }

    private func place(spare: (x: Int, y: Int), centred: (Int) -> Int) -> (left: Int, top: Int) {
        let left: Int
        let top: Int
        switch self {
        case .west, .northwest, .southwest: left = 0
        case .east, .northeast, .southeast: left = spare.x
        default: left = centred(spare.x)
        }
        switch self {
        case .north, .northwest, .northeast: top = 0
        case .south, .southwest, .southeast: top = spare.y
        default: top = centred(spare.y)
        }
        return (left, top)
    }
}

extension VipsImage {
    /// Crops to `width`×`height`, clamped to the image, placing the window by `gravity`.
    public func cropped(width: Int, height: Int, gravity: Gravity) throws(VipsError) -> VipsImage {
        let window = (width: min(max(1, width), self.width), height: min(max(1, height), self.height))
        if window == (self.width, self.height) { return self }
        if let interest = gravity.interest {
            return try smartCropped(width: window.width, height: window.height, interest: interest)
        }
        let (left, top) = gravity.origin(of: window, in: (self.width, self.height))
        return try extracted(left: left, top: top, width: window.width, height: window.height)
    }
}
