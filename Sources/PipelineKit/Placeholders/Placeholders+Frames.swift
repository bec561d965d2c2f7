import Vips

extension Placeholders {
    /// The most frames of an animation looked at for one in which anything is seen.
    static let framesLookedAt = 32

    /// The first of `count` frames, read in order by `frame`, in which anything is seen (an
    /// alpha of `seenAlpha` or more somewhere); the first frame when none among the first
    /// `framesLookedAt` is. An animation may open on a clear frame, whose colour would be black
    /// and whose blur blank.
    static func firstSeenFrame(count: Int, _ frame: (Int) throws(VipsError) -> VipsImage) throws(VipsError) -> VipsImage {
        let first = try frame(0)
        var candidate = first
        for index in 0..<min(count, framesLookedAt) {
            if index > 0 { candidate = try frame(index) }
            if try showsAnything(candidate) { return candidate }
        }
        return first
    }

    /// Whether every pixel of `image` is opaque: it has no alpha band, or its least alpha is 255.
    static func isOpaque(_ image: VipsImage) throws(VipsError) -> Bool {
        guard image.hasAlpha else { return true }
        let alpha = try image.extractingBands(image.bands - 1)
        guard let least = try Vips.call("min", ["in": .image(alpha)])["out"]?.number else {
            throw VipsError(operation: "min", message: "min gave no value")
        }
        return least >= 255
    }

    /// Whether anything of `image` is seen: it has no alpha band, or a pixel of alpha
    /// `seenAlpha` or more.
    static func showsAnything(_ image: VipsImage) throws(VipsError) -> Bool {
        guard image.hasAlpha else { return true }
        let alpha = try image.extractingBands(image.bands - 1)
        guard let most = try Vips.call("max", ["in": .image(alpha)])["out"]?.number else {
            throw VipsError(operation: "max", message: "max gave no value")
        }
        return most >= seenAlpha
    }
}
