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
        let metadata: [Option] = [
            .boolean("strip", default: base.strip, help: "remove metadata (EXIF, XMP, IPTC, ICC profile); the same as keep: \"none\""),
            Option(
                "keep", .anyOf([.choice(["all", "none"]), .array(.choice(Metadata.allCases.map(\.rawValue)), minCount: 0)]),
                default: JSONNode(plain: EncoderSettings.Metadata.allCases.filter(EncoderSettings.defaultKeep.contains).map(\.rawValue)),
                help:
                    "metadata kept from the input: \"all\", \"none\" or a list of icc, exif, xmp, iptc (not with strip); "
                    + "by default the colour profile alone, so no camera EXIF or GPS position is published unless asked for"),
            Option(
                "iccProfile", .string(nonEmpty: true),
                help: "convert to this colour profile and embed it: srgb, p3 (Display P3), cmyk, or an ICC file's path"),
        ]
        let quality = QualityTarget.option(for: format)
        let lossless = Option.boolean("lossless", default: base.lossless, help: "lossless compression")
        switch format {
        case .jpeg:
            return [
                quality,
                .boolean("progressive", default: base.progressive, help: "progressive (interlaced) JPEG"),
                .choice(
                    "chromaSubsampling", ChromaSubsampling.self, default: base.chromaSubsampling,
                    help: "chroma subsampling; auto subsamples below quality 90"),
                .colour(
                    "background", default: Units.text(colour: base.background), help: "colour that transparent pixels are flattened onto"),
            ] + metadata
        case .png:
            return [
                .integer("compression", in: 0...9, default: base.compression, help: "zlib compression level, 0–9"),
                .boolean("palette", default: base.palette, help: "quantise to an 8-bit palette (much smaller files)"),
                .integer("quality", in: 1...100, default: base.quality, help: "palette quantisation quality, 1–100"),
                .integer("effort", in: 1...10, default: base.effort, help: "palette quantisation effort, 1–10"),
            ] + metadata
        case .webp:
            return [
                quality, lossless,
                .integer("effort", in: 0...6, default: base.effort, help: "CPU effort, 0 (fast) – 6 (small)"),
            ] + metadata
        case .avif, .heic:
            return [
                quality, lossless,
                .integer("effort", in: 0...9, default: base.effort, help: "CPU effort, 0 (fast) – 9 (small)"),
            ]
                + (format == .heic
                    ? [
                        .choice(
                            "chromaSubsampling", ChromaSubsampling.self, default: base.chromaSubsampling,
                            help: "chroma subsampling; auto subsamples below quality 90")
                    ] : [])
                + metadata
        case .gif:
            return [
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
            ] + metadata
        case .jxl:
            return [
                QualityTarget.option(for: .jxl, help: "quality, 1–100 (not with distance)"),
                .number("distance", in: 0...15, help: "Butteraugli distance, 0–15: 1.0 is visually lossless (not with quality)"),
                .integer("effort", in: 3...9, default: base.effort, help: "CPU effort, 3 (fast) – 9 (small)"),
                lossless,
            ] + metadata
        case .tiff:
            return [
                .choice("compression", TIFFCompression.self, default: base.tiffCompression, help: "compression"),
                .choice(
                    "predictor", TIFFPredictor.self, default: base.predictor,
                    help: "prediction before deflate, lzw or zstd compression (float for floating-point images)"),
                .integer("quality", in: 1...100, default: base.quality, help: "quality of jpeg and webp compression, 1–100"),
                .boolean("tile", default: base.tile, help: "write square tiles instead of strips"),
                .integer("tileSize", in: 16...4096, default: base.tileSize, help: "tile side in pixels, a multiple of 16 (with tile)"),
                .boolean("pyramid", default: base.pyramid, help: "add half-size levels down to one tile (tiled), for zooming viewers"),
            ] + metadata
        }
    }
}
