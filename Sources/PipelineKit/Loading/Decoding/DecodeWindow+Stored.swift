extension DecodeWindow {
    /// This window of an image `upright` in size, where it lies in the pixels as stored under
    /// EXIF `orientation` (2 to 8), its size turned as they are. Its own inverse only for the
    /// orientations that are their own inverse: 6 and 8 undo each other.
    func stored(in upright: ImageSize, orientation: Int) -> DecodeWindow {
        let (width, height) = (upright.width, upright.height)
        // Where the upright pixel (x, y) is stored.
        func stored(_ x: Int, _ y: Int) -> (x: Int, y: Int) {
            switch orientation {
            case 2: (width - 1 - x, y)
            case 3: (width - 1 - x, height - 1 - y)
            case 4: (x, height - 1 - y)
            case 5: (y, x)
            case 6: (y, width - 1 - x)
            case 7: (height - 1 - y, width - 1 - x)
            case 8: (height - 1 - y, x)
            default: (x, y)
            }
        }
        let first = stored(left, top)
        let last = stored(left + self.width - 1, top + self.height - 1)
        let swaps = orientation >= 5
        return DecodeWindow(
            left: min(first.x, last.x), top: min(first.y, last.y),
            width: abs(last.x - first.x) + 1, height: abs(last.y - first.y) + 1,
            size: swaps ? ImageSize(width: size.height, height: size.width) : size)
    }
}
