import Vips

extension Placeholders {
    /// The dominant colour of `image` as `#rrggbb`, computed as sharp's `stats().dominant`.
    ///
    /// Alpha is dropped (transparent pixels count with their colour, as in sharp), the whole
    /// image is counted into a 16×16×16 histogram of its 8-bit sRGB values, and the answer is
    /// the centre of the fullest bin (`bin × 16 + 8` on each axis). Ties go to the bin libvips'
    /// `maxpos` meets first, as in sharp: the lowest green, then red, then blue.
    public static func dominantColor(of image: VipsImage) throws(PlaceholderError) -> String {
        try dominantColor(of: PlaceholderSource(image, for: .dominantColor))
    }

    static func dominantColor(of source: PlaceholderSource) throws(PlaceholderError) -> String {
        let counts = try PlaceholderError.naming(.dominantColor) { () throws(VipsError) in
            let image = source.image
            let colour = image.hasAlpha ? try image.applying("extract_band", ["band": .integer(0), "n": .integer(3)]) : image
            // A 16×16 image of 16 bands: x is the red bin, y the green bin, the band the blue bin.
            return try colour.applying("hist_find_ndim", ["bins": .integer(bins)]).values()
        }
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
}
