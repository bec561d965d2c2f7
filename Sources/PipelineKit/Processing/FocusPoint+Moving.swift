import Foundation
import Vips

// A focus point is given on the input as decoded. A step before the crop that reads it may move
// the picture (a flop, a turn, a crop, a border): these carry the point along, so the crop keeps
// what the point marks (`ImageProcessing.movedPoint(_:from:to:)`). A step that places its cut by
// the pixels (a smart crop, a trim) cannot say where from the sizes alone, and leaves the point be.

extension FocusPoint {
    /// The point at `x`, `y`, each moved into 0…1 (a point cut away by a crop goes to the
    /// nearest edge that is kept); the centre for a value that is not a number.
    public init(clampingX x: Double, y: Double) {
        func clamped(_ value: Double) -> Double { value.isNaN ? 0.5 : min(1, max(0, value)) }
        self = FocusPoint(x: clamped(x), y: clamped(y)) ?? .centre
    }

    /// The point mirrored left to right (`horizontally`) and top to bottom (`vertically`).
    public func mirrored(horizontally: Bool, vertically: Bool) -> FocusPoint {
        FocusPoint(clampingX: horizontally ? 1 - x : x, y: vertically ? 1 - y : y)
    }

    /// The point of an image of `size`, as fractions of `frame`, a rectangle in that image's
    /// pixels: a crop's window (inside the image), or the canvas the image is placed on (a
    /// negative corner, for a border). A point outside the frame goes to its nearest edge.
    public func seen(through frame: PixelBox, of size: ImageSize) -> FocusPoint {
        guard frame.width > 0, frame.height > 0 else { return self }
        return FocusPoint(
            clampingX: (x * Double(size.width) - Double(frame.left)) / Double(frame.width),
            y: (y * Double(size.height) - Double(frame.top)) / Double(frame.height))
    }

    /// The point of an image of `size` turned `degrees` clockwise about its centre onto a
    /// canvas of `result` size, centred on the same point.
    public func turned(clockwise degrees: Double, from size: ImageSize, to result: ImageSize) -> FocusPoint {
        guard result.width > 0, result.height > 0 else { return self }
        let (sine, cosine): (Double, Double)
        // Quarter turns exactly, so a point on an edge stays on it.
        switch VipsImage.normalisedDegrees(degrees) {
        case 0: (sine, cosine) = (0, 1)
        case 90: (sine, cosine) = (1, 0)
        case 180: (sine, cosine) = (0, -1)
        case 270: (sine, cosine) = (-1, 0)
        case let other: (sine, cosine) = (sin(other * .pi / 180), cos(other * .pi / 180))
        }
        // From the centre, with y down: a clockwise turn takes right to down.
        let dx = (x - 0.5) * Double(size.width)
        let dy = (y - 0.5) * Double(size.height)
        return FocusPoint(
            clampingX: 0.5 + (dx * cosine - dy * sine) / Double(result.width),
            y: 0.5 + (dx * sine + dy * cosine) / Double(result.height))
    }
}
