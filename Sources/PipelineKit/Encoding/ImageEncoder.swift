import Foundation
import Vips

/// Encodes a processed image with an output's encoder settings.
enum ImageEncoder {
    static func encode(_ image: VipsImage, with settings: EncoderSettings) throws -> Data {
        var image = image
        if settings.format == .jpeg, image.hasAlpha {
            // JPEG has no alpha: composite onto the background instead of dropping the band,
            // which would turn transparent areas into whatever colour they happened to hold.
            let colourBands = image.bands - 1
            let background = colourBands == 1 ? [settings.background[0]] : Array(settings.background.prefix(3))
            image = try image.flattened(background: background)
        }
        return try image.encoded(suffix: settings.vipsSuffix)
    }
}
