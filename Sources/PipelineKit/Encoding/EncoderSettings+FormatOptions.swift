/// The keys each format family adds to an `encode` object, and the metadata keys every format
/// shares; `options(for:)` puts them together.
extension EncoderSettings {
    /// The metadata keys every format has: what is kept from the input, and the profile converted to.
    static func metadataOptions(_ base: EncoderSettings) -> [Option] {
        [
            .boolean("strip", default: base.strip, help: "remove metadata (EXIF, XMP, IPTC, ICC profile); the same as keep: \"none\""),
            Option(
                "keep", .anyOf([.choice(["all", "none"]), .array(.choice(Metadata.allCases.map(\.rawValue)), minCount: 0)]),
                default: JSONNode(plain: EncoderSettings.Metadata.allCases.filter(EncoderSettings.defaultKeep.contains).map(\.rawValue)),
                help:
                    "metadata kept from the input: \"all\", \"none\" or a list of icc, exif, xmp, iptc (not with strip); "
                    + "by default the colour profile alone, so no camera EXIF or GPS position is published unless asked for"),
            Option(
                "iccProfile", .string(nonEmpty: true),
                help: base.format == .gif
                    ? "srgb only: a GIF cannot embed a colour profile, so its colours are shown as sRGB"
                    : "convert to this colour profile and embed it: srgb, p3 (Display P3), cmyk, or an ICC file's path",
                example: base.format == .gif ? "\"srgb\"" : "\"p3\""),
        ]
    }

    /// JPEG's keys: quality, progressive, chroma subsampling, the background under transparency.
    static func jpegOptions(_ base: EncoderSettings) -> [Option] {
        let quality = QualityTarget.option(for: base.format)
        return [
            quality,
            .boolean("progressive", default: base.progressive, help: "progressive (interlaced) JPEG"),
            .choice(
                "chromaSubsampling", ChromaSubsampling.self, default: base.chromaSubsampling,
                help: "chroma subsampling; auto subsamples below quality 90"),
            .colour(
                "background", default: Units.text(colour: base.background), help: "colour that transparent pixels are flattened onto"),
        ]
    }

    /// PNG's keys: zlib compression, and the palette with its quantisation.
    static func pngOptions(_ base: EncoderSettings) -> [Option] {
        [
            .integer("compression", in: 0...9, default: base.compression, help: "zlib compression level, 0–9"),
            .boolean("palette", default: base.palette, help: "quantise to an 8-bit palette (much smaller files)"),
            QualityTarget.option(for: base.format, help: "palette quantisation quality, 1–100; given, it sets palette"),
            .integer("effort", in: 1...10, default: base.effort, help: "palette quantisation effort, 1–10; given, it sets palette"),
        ]
    }

    /// WebP's keys: quality or lossless, and effort.
    static func webpOptions(_ base: EncoderSettings) -> [Option] {
        let quality = QualityTarget.option(for: base.format)
        let lossless = Option.boolean("lossless", default: base.lossless, help: "lossless compression")
        return [
            quality, lossless,
            .integer("effort", in: 0...6, default: base.effort, help: "CPU effort, 0 (fast) – 6 (small)"),
        ]
    }

    /// AVIF's and HEIC's keys (AV1 or HEVC in HEIF): quality or lossless, effort, chroma subsampling.
    static func heifOptions(_ base: EncoderSettings) -> [Option] {
        [
            QualityTarget.option(for: base.format),
            .boolean(
                "lossless", default: base.lossless,
                help: base.format == .heic
                    // libvips 8.14 has libheif code the image as YCbCr, whose rounding HEVC keeps.
                    ? "lossless HEVC of the image as YCbCr 4:4:4: with Debian 12's libvips and libheif a colour image comes back "
                        + "within one level (grey exactly); AVIF, WebP and JPEG XL are exact"
                    : "lossless compression"),
            .integer(
                "effort", in: 0...9, default: base.effort,
                help: base.format == .heic
                    // libvips 8.14 sets libheif's "speed", which the x265 plugin of libheif 1.15 does not have.
                    ? "no effect on HEIC with Debian 12's libvips and libheif (their HEVC encoder takes no speed); 0–9"
                    : "CPU effort, 0 (fast) – 9 (small)"),
            .choice(
                "chromaSubsampling", ChromaSubsampling.self, default: base.chromaSubsampling,
                help: "chroma subsampling; auto subsamples below quality 90"),
        ]
    }

    /// GIF's keys: the palette, dithering, what repeats between frames, and the loop count.
    static func gifOptions(_ base: EncoderSettings) -> [Option] {
        [
            .integer("effort", in: 1...10, default: base.effort, help: "palette quantisation effort, 1 (fast) – 10 (best)"),
            .number("dither", in: 0...1, default: base.dither, help: "amount of dithering, 0 (none) – 1"),
            .integer("bitdepth", in: 1...8, default: base.bitDepth, help: "bits a pixel, 1–8 (2 to 256 colours)"),
            .number(
                "interFrameMaxError", in: 0...32, default: base.interFrameMaxError,
                help: "largest error for which a pixel repeats the frame before (transparent), 0–32; 0 turns it off"),
            .boolean("reuse", default: base.reusePalette, help: "reuse the frame before's palette while interPaletteMaxError allows"),
            .number(
                "interPaletteMaxError", in: 0...256, default: base.interPaletteMaxError,
                help: "largest error for which the frame before's palette is reused, 0–256"),
            .integer(
                "loop", in: 0...65535,
                help:
                    "how many times an animation plays, 0 for ever (default: as often as the input's animation, for ever for a still input)"
            ),
        ]
    }

    /// JPEG XL's keys: quality or Butteraugli distance, effort, lossless.
    static func jxlOptions(_ base: EncoderSettings) -> [Option] {
        let lossless = Option.boolean("lossless", default: base.lossless, help: "lossless compression")
        return [
            QualityTarget.option(for: .jxl, help: "quality, 1–100 (not with distance)"),
            .number("distance", in: 0...15, help: "Butteraugli distance, 0–15: 1.0 is visually lossless (not with quality)"),
            .integer("effort", in: 3...9, default: base.effort, help: "CPU effort, 3 (fast) – 9 (small)"),
            lossless,
        ]
    }

    /// TIFF's keys: compression and its predictor, tiles and pyramids.
    static func tiffOptions(_ base: EncoderSettings) -> [Option] {
        [
            .choice("compression", TIFFCompression.self, default: base.tiffCompression, help: "compression"),
            .choice(
                "predictor", TIFFPredictor.self, default: base.predictor,
                help: "prediction before deflate, lzw or zstd compression (float for floating-point images)"),
            QualityTarget.option(for: base.format, help: "quality of jpeg and webp compression, 1–100"),
            .boolean("tile", default: base.tile, help: "write square tiles instead of strips"),
            .integer("tileSize", in: 16...4096, default: base.tileSize, help: "tile side in pixels, a multiple of 16 (with tile)"),
            .boolean("pyramid", default: base.pyramid, help: "add half-size levels down to one tile (tiled), for zooming viewers"),
        ]
    }
}
