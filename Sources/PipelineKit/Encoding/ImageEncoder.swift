import Vips

/// Encodes a processed image with an output's encoder settings.
enum ImageEncoder {
    /// Encodes `image` into an open file.
    static func encode(_ image: VipsImage, with settings: EncoderSettings, into descriptor: Int32) throws(VipsError) {
        try prepare(image, for: settings).write(toDescriptor: descriptor, suffix: settings.vipsSuffix)
    }

    static func prepare(_ image: VipsImage, for settings: EncoderSettings) throws(VipsError) -> VipsImage {
        guard settings.format == .jpeg, image.hasAlpha else { return image }
        // JPEG has no alpha: composite onto the background instead of dropping the band,
        // which would turn transparent areas into whatever colour they happened to hold.
        let colourBands = image.bands - 1
        let background = colourBands == 1 ? [settings.background[0]] : Array(settings.background.prefix(3))
        return try image.flattened(background: background)
    }
}
