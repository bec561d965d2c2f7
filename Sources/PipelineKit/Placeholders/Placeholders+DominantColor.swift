import Vips

extension Placeholders {
    /// The dominant colour of `image` as `#rrggbb`, computed as sharp's `stats().dominant`, but
    /// for pixels all but transparent.
    ///
    /// The image is counted into a 16×16×16 histogram of its 8-bit sRGB values, and the answer
    /// is the centre of the fullest bin (`bin × 16 + 8` on each axis). Ties go to the bin
    /// libvips' `maxpos` meets first, as in sharp: the lowest green, then red, then blue. A
    /// pixel of alpha below `seenAlpha` does not count (sharp counts it with its colour, which
    /// nobody sees and encoders make black: a logo on transparency would be black), unless every
    /// pixel is one.
    public static func dominantColor(of image: VipsImage) throws(PlaceholderError) -> String {
        try dominantColor(of: PlaceholderSource(image, for: .dominantColor))
    }

    static func dominantColor(of source: PlaceholderSource) throws(PlaceholderError) -> String {
        let counts = try PlaceholderError.naming(.dominantColor) { () throws(VipsError) in try seenColours(of: source.image) }
        guard counts.count == bins * bins * bins else {
            throw PlaceholderError(
                .dominantColor, .vips(operation: "hist_find_ndim", message: "gave \(counts.count) bins, not \(bins * bins * bins)"))
        }
        // libvips scans row by row (green), pixel by pixel (red), band by band (blue) and keeps
        // the first maximum it meets.
        var best = 0
        for index in counts.indices where counts[index] > counts[best] { best = index }
        let blue = best % bins
        let red = (best / bins) % bins
        let green = best / (bins * bins)
        return Units.text(colour: [red, green, blue].map { Double($0 * (256 / bins) + 256 / bins / 2) })
    }

    private static let bins = 16
    /// The least alpha of a pixel that counts: below it a pixel is all but transparent. Not 1:
    /// a lossy alpha (AVIF's) leaves the clear parts of an image at 1 to 4 here and there.
    static let seenAlpha = 16.0

    /// The histogram of the colours of `image`'s pixels that are not all but transparent (of
    /// every pixel, when all are).
    private static func seenColours(of image: VipsImage) throws(VipsError) -> [Double] {
        // A 16×16 image of 16 bands: x is the red bin, y the green bin, the band the blue bin.
        func counts(_ image: VipsImage) throws(VipsError) -> [Double] {
            try image.applying("hist_find_ndim", ["bins": .integer(bins)]).values()
        }
        guard image.hasAlpha else { return try counts(image) }
        let colour = try image.extractingBands(0, count: 3)
        let clear = try image.extractingBands(3).applying("relational_const", ["relational": .string("less"), "c": .numbers([seenAlpha])])
        guard let clearShare = try Vips.call("avg", ["in": .image(clear)])["out"]?.number else {
            throw VipsError(operation: "avg", message: "avg gave no number")
        }
        let seen = Double(image.width * image.height) * (1 - clearShare / 255)
        var all = try counts(colour)
        guard seen.rounded() > 0 else { return all }
        // The clear pixels' colours, every other pixel black: taken from the whole count, with
        // the others given back to the first bin, it leaves the pixels seen.
        let clearColours = try counts(colour.applying("boolean", ["right": .image(clear), "boolean": .string("and")]))
        for index in all.indices { all[index] -= clearColours[index] }
        all[0] += seen.rounded()
        return all
    }
}
