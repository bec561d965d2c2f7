import Vips

/// An image made ready for placeholders: 8-bit sRGB, 3 bands or 4 with alpha.
struct PlaceholderSource {
    let image: VipsImage

    /// Converts `image` to 8-bit sRGB (greyscale gains colour bands, 16-bit is scaled down);
    /// `kind` names the placeholder in errors.
    init(_ image: VipsImage, for kind: PlaceholderKind) throws(PlaceholderError) {
        guard image.width > 0, image.height > 0 else {
            throw PlaceholderError(kind, .unsupportedImage("the image has no pixels"))
        }
        let converted: VipsImage
        do throws(VipsError) {
            converted = try Self.sRGB8(image)
        } catch {
            throw PlaceholderError(kind, error)
        }
        guard converted.bands == 3 || (converted.bands == 4 && converted.hasAlpha) else {
            throw PlaceholderError(
                kind,
                .unsupportedImage(
                    "an image of \(image.bands) bands (\(image.interpretation)) does not become sRGB with at most one alpha band"))
        }
        self.image = converted
    }

    /// Whether any pixel's alpha is below 255; `kind` names the placeholder in errors.
    func isTransparent(naming kind: PlaceholderKind) throws(PlaceholderError) -> Bool {
        try PlaceholderError.naming(kind) { () throws(VipsError) in try !Placeholders.isOpaque(image) }
    }

    private static func sRGB8(_ image: VipsImage) throws(VipsError) -> VipsImage {
        var converted = image
        // An output written in another colour space (Display P3) holds that profile's values,
        // which read as sRGB would be washed out. A profile libvips cannot use is passed over,
        // as decoding passes it over.
        if image.hasICCProfile, !image.hasSRGBProfile, let fromProfile = try? image.convertedFromEmbeddedProfileToSRGB() {
            converted = fromProfile
        }
        if converted.interpretation != .sRGB || converted.bandFormat != .uchar {
            converted = try converted.converted(to: .sRGB)
        }
        if converted.bandFormat != .uchar { converted = try converted.cast(to: .uchar) }
        return converted
    }

    /// A copy resized to exactly `width`×`height` (lanczos3, with premultiplied alpha so that
    /// transparent pixels do not bleed their colour), or the image itself at that size.
    func resized(width: Int, height: Int) throws(VipsError) -> VipsImage {
        guard width != image.width || height != image.height else { return image }
        let horizontal = Double(width) / Double(image.width)
        let vertical = Double(height) / Double(image.height)
        let resized = try image.withPremultipliedAlpha { premultiplied throws(VipsError) in
            try premultiplied.resized(horizontalScale: horizontal, verticalScale: vertical, kernel: .lanczos3)
        }
        return try resized.rendered()
    }

    /// A copy whose longer side is at most `side` pixels, keeping the aspect ratio (each side
    /// rounded, at least 1 pixel); never enlarged.
    func fitted(within side: Int) throws(VipsError) -> VipsImage {
        let size = Self.size(of: (image.width, image.height), fittedWithin: side)
        return try resized(width: size.width, height: size.height)
    }

    static func size(of size: (width: Int, height: Int), fittedWithin side: Int) -> (width: Int, height: Int) {
        let longest = max(size.width, size.height)
        guard longest > side else { return size }
        let scale = Double(side) / Double(longest)
        return (max(1, Int((Double(size.width) * scale).rounded())), max(1, Int((Double(size.height) * scale).rounded())))
    }
}
