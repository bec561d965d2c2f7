import Foundation
import Vips

extension Placeholders {
    /// A `data:image/webp;base64,…` URI of `image` shrunk to at most `width` pixels wide and
    /// `lqipLongestSide` tall (`lqipSize`), keeping its alpha, encoded as lossy WebP at
    /// `quality` without metadata. Smaller images keep their size.
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
        return "data:image/webp;base64," + pixelsOnly(webp).base64EncodedString()
    }

    /// The WebP file without its metadata chunks (EXIF, XMP, ICC profile, unknown ones) and
    /// without the VP8X flags announcing them. A data URI is inlined in every page, and libvips'
    /// WebP saver writes an EXIF chunk of its own making (`SaverEXIF`) despite `strip`: most of
    /// each placeholder's bytes. A file that is not the RIFF WebP expected is returned as it is.
    static func pixelsOnly(_ webp: Data) -> Data {
        let pixels: Set<String> = ["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF"]
        return WebPChunks.removing(from: webp, flags: WebPChunks.iccFlag | WebPChunks.exifFlag | WebPChunks.xmpFlag) {
            !pixels.contains($0)
        }
    }

    /// The tallest LQIP made. A page stretches the LQIP over the image's box, so a taller one
    /// shows nothing more; WebP holds 16,383 pixels a side at most.
    static let lqipLongestSide = 1024

    /// The size of the LQIP of an image of `size`: `width` wide and `lqipLongestSide` tall at
    /// most, the same aspect ratio while each side is a pixel or more (each rounded).
    static func lqipSize(of size: (width: Int, height: Int), width: Int) -> (width: Int, height: Int) {
        let scale = min(Double(width) / Double(size.width), Double(lqipLongestSide) / Double(size.height))
        guard scale < 1 else { return size }
        return (max(1, Int((Double(size.width) * scale).rounded())), max(1, Int((Double(size.height) * scale).rounded())))
    }
}
