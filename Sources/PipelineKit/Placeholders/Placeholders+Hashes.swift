import Foundation
import Vips

extension Placeholders {
    /// The longest side of the copy a BlurHash is computed from. The DCT reads every pixel for
    /// every component, and 64 pixels already hold far more detail than 9×9 components keep.
    public static let blurhashSide = 64
    /// The short side a thin image's copy keeps, fitted within `blurhashSide` it would keep a few
    /// pixels, too few to read the components from.
    static let blurhashShortSide = 16
    /// The longest side a thin image's copy may have, which bounds the encoder's work.
    static let blurhashLongestSide = 16_384

    /// The BlurHash of `image` fitted within `blurhashSide`×`blurhashSide` (never enlarged),
    /// with `xComponents`×`yComponents` components; alpha is ignored, as in the reference.
    public static func blurhash(of image: VipsImage, xComponents: Int = 4, yComponents: Int = 3) throws(PlaceholderError) -> String {
        let range = PlaceholderSettings.blurhashComponentRange
        try PlaceholderSettings.check("blurhashXComponents", xComponents, in: range, for: .blurhash)
        try PlaceholderSettings.check("blurhashYComponents", yComponents, in: range, for: .blurhash)
        return try blurhash(of: PlaceholderSource(image, for: .blurhash), xComponents: xComponents, yComponents: yComponents)
    }

    static func blurhash(of source: PlaceholderSource, xComponents: Int, yComponents: Int) throws(PlaceholderError) -> String {
        // A thin image keeps enough of its short side to read the components from.
        let (long, short) = (max(source.image.width, source.image.height), min(source.image.width, source.image.height))
        let kept = Int((Double(blurhashShortSide * long) / Double(short)).rounded(.up))
        let side = max(blurhashSide, min(blurhashLongestSide, kept))
        let small = try PlaceholderError.naming(.blurhash) { () throws(VipsError) in try source.fitted(within: side) }
        let pixels = try PlaceholderError.naming(.blurhash) { () throws(VipsError) in try small.bytes() }
        return try BlurHash.encode(
            pixels: pixels, width: small.width, height: small.height, channels: small.bands,
            xComponents: xComponents, yComponents: yComponents)
    }

    /// The ThumbHash of `image` fitted within 100×100 (never enlarged), as standard base64 with
    /// padding: the reference returns bytes, and its demo shows them this way.
    public static func thumbhash(of image: VipsImage) throws(PlaceholderError) -> String {
        try thumbhash(of: PlaceholderSource(image, for: .thumbhash))
    }

    static func thumbhash(of source: PlaceholderSource) throws(PlaceholderError) -> String {
        let rgba = try PlaceholderError.naming(.thumbhash) { () throws(VipsError) in
            let small = try source.fitted(within: ThumbHash.maximumSide)
            return small.hasAlpha ? small : try small.appendingBand(value: 255)
        }
        let pixels = try PlaceholderError.naming(.thumbhash) { () throws(VipsError) in try rgba.bytes() }
        return Data(try ThumbHash.encode(rgba: pixels, width: rgba.width, height: rgba.height)).base64EncodedString()
    }
}
