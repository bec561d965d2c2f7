import Foundation

extension VipsImage {
    /// A rotation by a multiple of 90°, clockwise: pixels move, none is resampled.
    public enum QuarterTurn: Int, CaseIterable, Sendable {
        /// No turn: the image as it is.
        case none = 0
        /// A quarter turn clockwise.
        case clockwise = 90
        /// Upside down.
        case half = 180
        /// A quarter turn anticlockwise (three clockwise).
        case anticlockwise = 270

        /// The turn for `degrees` (any value, taken mod 360), or nil when it is not a multiple of 90.
        public init?(degrees: Double) {
            let normalised = VipsImage.normalisedDegrees(degrees)
            guard normalised.truncatingRemainder(dividingBy: 90) == 0 else { return nil }
            self.init(rawValue: Int(normalised))
        }

        /// libvips' name for the turn, as `rot` takes it.
        var nick: String {
            switch self {
            case .none: "d0"
            case .clockwise: "d90"
            case .half: "d180"
            case .anticlockwise: "d270"
            }
        }
    }

    /// `degrees` taken mod 360, in 0..<360.
    public static func normalisedDegrees(_ degrees: Double) -> Double {
        var angle = degrees.truncatingRemainder(dividingBy: 360)
        if angle < 0 { angle += 360 }
        // A tiny negative angle plus 360 rounds to 360; -0 is 0.
        return angle >= 360 || angle == 0 ? 0 : angle
    }

    /// Rotates by a multiple of 90° clockwise, exactly.
    public func rotated(by turn: QuarterTurn) throws(VipsError) -> VipsImage {
        guard turn != .none else { return self }
        return try applying("rot", ["angle": .string(turn.nick)])
    }

    /// Rotates clockwise by `degrees` with bilinear interpolation onto a canvas that holds the
    /// whole rotated image (`rotatedSize(of:degrees:)`), filling the corners with `background`
    /// (one value per band). Use `rotated(by:)` for multiples of 90°: it is exact.
    public func rotated(degrees: Double, background: [Double]) throws(VipsError) -> VipsImage {
        // libvips calls its angle anticlockwise, but in image coordinates (y down) it turns clockwise.
        try applying("rotate", ["angle": .number(Self.normalisedDegrees(degrees)), "background": .numbers(background)])
    }

    /// The size of `rotated(degrees:background:)`'s result for an image of `size`: the bounding
    /// box of the turned corners, computed as libvips does (`vips__transform_set_area`), so the
    /// answer matches the real result to the pixel.
    public static func rotatedSize(of size: (width: Int, height: Int), degrees: Double) -> (width: Int, height: Int) {
        let radians = normalisedDegrees(degrees) * .pi / 180
        let (a, b) = (cos(radians), -sin(radians))
        let (c, d) = (-b, a)
        let (width, height) = (Double(size.width), Double(size.height))
        let xs = [0, a * width, b * height, a * width + b * height]
        let ys = [0, c * width, d * height, c * width + d * height]
        let spanX = xs.max()! - xs.min()!
        let spanY = ys.max()! - ys.min()!
        return (Int(spanX.rounded(.toNearestOrEven)), Int(spanY.rounded(.toNearestOrEven)))
    }

    /// Which way `flipped(_:)` mirrors an image.
    public enum FlipDirection: String, CaseIterable, Sendable {
        /// Left to right, about the vertical axis.
        case horizontal
        /// Top to bottom, about the horizontal axis.
        case vertical
    }

    /// Mirrors the image, exactly.
    public func flipped(_ direction: FlipDirection) throws(VipsError) -> VipsImage {
        try applying("flip", ["direction": .string(direction.rawValue)])
    }

    /// How `embedded(x:y:width:height:extend:background:)` fills the new pixels.
    public enum Extend: String, CaseIterable, Sendable {
        /// With `background`.
        case background
        /// With copies of the nearest edge pixel.
        case copy
        /// By tiling the image.
        case `repeat`
        /// By reflecting the image at its edges.
        case mirror
    }

    /// Places the image at (`x`, `y`) on a `width`×`height` canvas whose new pixels are made as
    /// `extend` says; `background` (one value per band) is used by `.background` only.
    public func embedded(
        x: Int, y: Int, width: Int, height: Int, extend: Extend, background: [Double] = [0]
    ) throws(VipsError) -> VipsImage {
        var arguments: [String: VipsValue] = [
            "x": .integer(x), "y": .integer(y), "width": .integer(width), "height": .integer(height),
            "extend": .string(extend.rawValue),
        ]
        if extend == .background { arguments["background"] = .numbers(background) }
        return try applying("embed", arguments)
    }

    /// The pixel values of the colour `rgba` (red, green, blue and alpha, 0–255) in this image's
    /// bands: a greyscale image gets its luminance (Rec. 709 weights, as libvips uses for
    /// sRGB → B_W), bands beyond red, green and blue get 0, an image with alpha gets the colour's
    /// alpha, and a 16-bit image the values scaled to 0–65535.
    public func bandValues(of rgba: [Double]) -> [Double] {
        let (red, green, blue) = (rgba[0], rgba[1], rgba[2])
        let alpha = rgba.count > 3 ? rgba[3] : 255
        let colourBands = bands - (hasAlpha ? 1 : 0)
        var values: [Double]
        if colourBands >= 3 {
            values = [red, green, blue] + Array(repeating: 0, count: colourBands - 3)
        } else {
            values = Array(repeating: 0.2126 * red + 0.7152 * green + 0.0722 * blue, count: max(0, colourBands))
        }
        if hasAlpha { values.append(alpha) }
        let unit: Double = bandFormat == .ushort ? 257 : 1
        return values.map { $0 * unit }
    }

    /// The image ready to be filled with the colour `rgba` (0–255), and that colour's values in
    /// its bands: a greyscale image becomes colour when the colour is not a grey
    /// (`holdingColour(_:)`), and an image without alpha gets an opaque alpha band when the
    /// colour is translucent, so that the fill stays translucent, as sharp does.
    public func preparedForFill(with rgba: [Double]) throws(VipsError) -> (image: VipsImage, fill: [Double]) {
        var image = try holdingColour(rgba)
        if rgba.count > 3, rgba[3] < 255, !image.hasAlpha {
            let unit: Double = image.bandFormat == .ushort ? 257 : 1
            image = try image.appendingBand(value: 255 * unit)
        }
        return (image, image.bandValues(of: rgba))
    }
}
