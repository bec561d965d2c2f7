import Foundation
import Vips

extension Placeholders {
    /// A `data:image/webp;base64,…` URI of `image` shrunk to at most `width` pixels wide,
    /// keeping its aspect ratio (the height rounded, at least 1 pixel) and its alpha, encoded
    /// as lossy WebP at `quality` without metadata. Narrower images keep their size.
    public static func lqip(of image: VipsImage, width: Int = 16, quality: Int = 40) throws(PlaceholderError) -> String {
        try PlaceholderSettings.check("lqipWidth", width, in: PlaceholderSettings.lqipWidthRange, for: .lqip)
        try PlaceholderSettings.check("lqipQuality", quality, in: PlaceholderSettings.lqipQualityRange, for: .lqip)
        return try lqip(of: PlaceholderSource(image, for: .lqip), width: width, quality: quality)
    }

    static func lqip(of source: PlaceholderSource, width: Int, quality: Int) throws(PlaceholderError) -> String {
        let size = lqipSize(of: (source.image.width, source.image.height), width: width)
        let webp = try PlaceholderError.naming(.lqip) { () throws(VipsError) in
            try source.resized(width: size.width, height: size.height).encoded(suffix: ".webp[Q=\(quality),strip]")
        }
        return "data:image/webp;base64," + webp.base64EncodedString()
    }

    /// The size of the LQIP of an image of `size`: `width` wide at most, the same aspect ratio.
    static func lqipSize(of size: (width: Int, height: Int), width: Int) -> (width: Int, height: Int) {
        guard size.width > width else { return size }
        let height = Double(size.height) * Double(width) / Double(size.width)
        return (width, max(1, Int(height.rounded())))
    }
}
