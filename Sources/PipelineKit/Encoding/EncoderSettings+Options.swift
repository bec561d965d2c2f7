/// The options an `encode` object declares, per format, with their defaults: the schema, the
/// reference docs and the reader all take them from here.
extension EncoderSettings {
    /// The `encode` object's shape: one variant per format, each with exactly its options.
    static var shape: ValueShape {
        .tagged(
            key: "format",
            variants: Format.allCases.map { format in
                Variant(name: format.rawValue, summary: summary(format), options: options(for: format))
            })
    }

    static func summary(_ format: Format) -> String {
        switch format {
        case .jpeg: "JPEG (lossy, no alpha)"
        case .png: "PNG (lossless)"
        case .webp: "WebP (lossy or lossless, alpha)"
        case .avif: "AVIF (AV1 in HEIF, alpha)"
        case .gif: "GIF (256-colour palette, one-bit alpha)"
        case .jxl: "JPEG XL (lossy or lossless, alpha)"
        case .heic: "HEIC (HEVC in HEIF, alpha)"
        case .tiff: "TIFF (uncompressed or deflate, LZW, JPEG, WebP, zstd; tiles and pyramids)"
        }
    }

    /// The options an `encode` object of `format` accepts, besides `format` itself.
    static func options(for format: Format) -> [Option] {
        // Defaults are the settings' own, so that what the schema shows is what the encoder uses.
        let base = EncoderSettings(format: format)
        let own: [Option]
        switch format {
        case .jpeg: own = jpegOptions(base)
        case .png: own = pngOptions(base)
        case .webp: own = webpOptions(base)
        case .avif, .heic: own = heifOptions(base)
        case .gif: own = gifOptions(base)
        case .jxl: own = jxlOptions(base)
        case .tiff: own = tiffOptions(base)
        }
        return own + metadataOptions(base)
    }
}

extension EncoderSettings.Format {
    /// Whether an `encode` object of the format takes a `quality`: every format but GIF.
    public var takesQuality: Bool { EncoderSettings.options(for: self).contains { $0.name == "quality" } }
}
