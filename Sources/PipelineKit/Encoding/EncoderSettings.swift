import Foundation

/// How an output is encoded: the format and its options, from an output's `encode` object.
public struct EncoderSettings: Sendable, Hashable {
    /// The image formats pipeline writes.
    public enum Format: String, CaseIterable, Sendable {
        case jpeg, png, webp, avif, gif, jxl, heic, tiff

        /// The usual file extension, also the `{format}` placeholder: `jpg` for JPEG, the
        /// format's own name for the others (`tiff`, not `tif`).
        public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

        /// The media type, sent as an S3 object's `Content-Type`.
        public var mediaType: String { "image/\(rawValue)" }

        /// Extensions a path may end with for this format.
        var acceptedExtensions: Set<String> {
            switch self {
            case .jpeg: ["jpg", "jpeg", "jpe"]
            case .png: ["png"]
            case .webp: ["webp"]
            case .avif: ["avif"]
            case .gif: ["gif"]
            case .jxl: ["jxl"]
            case .heic: ["heic", "heif"]
            case .tiff: ["tif", "tiff"]
            }
        }
    }

    /// JPEG and HEIC chroma subsampling.
    public enum ChromaSubsampling: String, CaseIterable, Sendable {
        case auto
        case subsample420 = "4:2:0"
        case subsample444 = "4:4:4"
    }

    /// The metadata an output keeps from its input, as sharp names them.
    public enum Metadata: String, CaseIterable, Sendable {
        case icc, exif, xmp, iptc
    }

    /// TIFF compression.
    public enum TIFFCompression: String, CaseIterable, Sendable {
        case none, deflate, lzw, jpeg, webp, zstd
    }

    /// TIFF prediction before deflate, LZW or zstd compression.
    public enum TIFFPredictor: String, CaseIterable, Sendable {
        case none, horizontal, float
    }

    public var format: Format
    /// 1–100; for PNG, the quality of palette quantisation; for TIFF, of JPEG and WebP compression.
    public var quality: Int
    /// The score each image's quality is searched for instead of `quality`, when given.
    public var qualityTarget: QualityTarget?
    /// The metadata kept from the input (the rest is removed before saving); all by default.
    public var keep: Set<Metadata>
    /// Remove metadata (EXIF, XMP, comments, the colour profile): `keep` is empty. Viewers
    /// assume sRGB without a profile.
    public var strip: Bool {
        get { keep.isEmpty }
        set { keep = newValue ? [] : Set(Metadata.allCases) }
    }
    /// What the saver writes: `keep`, and the profile `iccProfile` embeds.
    var keptMetadata: Set<Metadata> {
        iccProfile == nil ? keep : keep.union([.icc])
    }
    /// The profile the pixels are converted to and embedded with (`srgb`, `p3`, `cmyk` or an
    /// ICC file's absolute path); nil leaves them as they are.
    public var iccProfile: String?
    public var progressive: Bool
    public var chromaSubsampling: ChromaSubsampling
    /// PNG zlib level, 0–9.
    public var compression: Int
    public var palette: Bool
    public var lossless: Bool
    /// CPU spent to make the file smaller: WebP 0–6, AVIF and HEIC 0–9, PNG palette and GIF 1–10, JPEG XL 3–9.
    public var effort: Int
    /// What transparent pixels become in formats without alpha (JPEG), RGBA 0–255.
    public var background: [Double]
    /// JPEG XL: the Butteraugli distance aimed at, instead of `quality`, when given.
    public var distance: Double?
    /// GIF: dithering of the palette, 0 (none) – 1.
    public var dither: Double
    /// GIF: bits a pixel, 1–8 (2–256 colours).
    public var bitDepth: Int
    /// GIF: the largest error for which a pixel is left transparent, repeating the frame before.
    public var interFrameMaxError: Double
    /// GIF: reuse the palette of the frame before while the error stays under `interPaletteMaxError`.
    public var reusePalette: Bool
    /// GIF: the largest error for which the frame before's palette is reused.
    public var interPaletteMaxError: Double
    /// GIF: how many times an animation plays, 0 for ever.
    public var loop: Int
    /// TIFF compression.
    public var tiffCompression: TIFFCompression
    /// TIFF prediction.
    public var predictor: TIFFPredictor
    /// TIFF: written in square tiles of `tileSize` pixels instead of strips.
    public var tile: Bool
    /// TIFF: the tile side in pixels, a multiple of 16.
    public var tileSize: Int
    /// TIFF: each half-size level follows the full image (tiled), for viewers that zoom.
    public var pyramid: Bool

    public init(
        format: Format, quality: Int? = nil, strip: Bool = false, progressive: Bool = false,
        chromaSubsampling: ChromaSubsampling = .auto, compression: Int = 6, palette: Bool = false,
        lossless: Bool = false, effort: Int? = nil, background: [Double] = [255, 255, 255, 255]
    ) {
        self.format = format
        self.quality = quality ?? Self.defaultQuality(format)
        self.keep = strip ? [] : Set(Metadata.allCases)
        self.progressive = progressive
        self.chromaSubsampling = chromaSubsampling
        self.compression = compression
        self.palette = palette
        self.lossless = lossless
        self.effort = effort ?? Self.defaultEffort(format)
        self.background = background
        dither = 1
        bitDepth = 8
        interFrameMaxError = 0
        reusePalette = false
        interPaletteMaxError = 3
        loop = 0
        tiffCompression = TIFFCompression.none
        predictor = .horizontal
        tile = false
        tileSize = 256
        pyramid = false
    }

    static func defaultQuality(_ format: Format) -> Int {
        switch format {
        case .jpeg, .webp: 80
        case .png, .gif: 100
        case .avif, .heic: 50
        case .jxl, .tiff: 75
        }
    }

    static func defaultEffort(_ format: Format) -> Int {
        switch format {
        case .webp, .avif, .heic: 4
        case .png, .gif, .jxl: 7
        case .jpeg, .tiff: 0
        }
    }

    /// The profiles libvips has built in, by the names `iccProfile` takes.
    static let builtInProfiles = ["srgb", "p3", "cmyk"]

    /// Reads an `encode` object that was checked against `options(for: format)`; relative ICC
    /// file paths resolve against `options.baseDirectory`.
    init(format: Format, options: ProcessorOptions) throws(OptionError) {
        let declared = Set(Self.options(for: format).map(\.name))
        func has(_ name: String) -> Bool { declared.contains(name) }
        self.init(
            format: format,
            quality: has("quality") ? try QualityTarget.fixedQuality(options) : nil,
            progressive: has("progressive") ? try options.bool("progressive") : false,
            chromaSubsampling: has("chromaSubsampling") ? try options.choice("chromaSubsampling", as: ChromaSubsampling.self) : .auto,
            compression: format == .png ? try options.int("compression") : 6,
            palette: has("palette") ? try options.bool("palette") : false,
            lossless: has("lossless") ? try options.bool("lossless") : false,
            effort: has("effort") ? try options.int("effort") : nil,
            background: has("background") ? try options.colour("background") : [255, 255, 255, 255]
        )
        keep = try Self.readKeep(options)
        qualityTarget = try QualityTarget.read(options, format: format)
        if let profile = try options.optionalString("iccProfile") {
            iccProfile = try Self.resolveProfile(profile, against: options.baseDirectory)
            if profile == "cmyk", format != .jpeg, format != .tiff {
                throw OptionError(option: "iccProfile", "cmyk needs a format with CMYK: jpeg or tiff, not \(format.rawValue)")
            }
        }
        switch format {
        case .gif:
            dither = try options.double("dither")
            bitDepth = try options.int("bitdepth")
            interFrameMaxError = try options.double("interFrameMaxError")
            reusePalette = try options.bool("reuse")
            interPaletteMaxError = try options.double("interPaletteMaxError")
            loop = try options.int("loop")
        case .jxl:
            if options.has("distance") {
                guard !options.has("quality") else {
                    throw OptionError(option: "distance", "give quality or distance, not both (distance 1.0 is about quality 90)")
                }
                distance = try options.double("distance")
            }
        case .tiff:
            tiffCompression = try options.choice("compression", as: TIFFCompression.self)
            predictor = try options.choice("predictor", as: TIFFPredictor.self)
            tile = try options.bool("tile")
            tileSize = try options.int("tileSize")
            pyramid = try options.bool("pyramid")
            guard tileSize % 16 == 0 else {
                throw OptionError(option: "tileSize", "\(tileSize) is not a multiple of 16, as TIFF tiles must be")
            }
            if options.has("tileSize"), !tile, !pyramid {
                throw OptionError(option: "tileSize", "tileSize needs tile: true (or pyramid: true, which is tiled)")
            }
        case .jpeg, .png, .webp, .avif, .heic:
            break
        }
    }

    /// `keep` from `"all"`, `"none"` or a list of kinds, or `strip: true` (`"none"`); both given is an error.
    private static func readKeep(_ options: ProcessorOptions) throws(OptionError) -> Set<Metadata> {
        let strip = try options.bool("strip")
        guard let node = options.value("keep") else { return strip ? [] : Set(Metadata.allCases) }
        if options.has("strip") {
            throw OptionError(option: "keep", "give keep or strip, not both (strip: true is keep: \"none\")")
        }
        switch node.value {
        case .string("all"): return Set(Metadata.allCases)
        case .string("none"): return []
        case .array(let items):
            var kept: Set<Metadata> = []
            for item in items {
                guard case .string(let name) = item.value, let kind = Metadata(rawValue: name) else {
                    throw OptionError(option: "keep", "\(item.jsonText) is not one of \(Metadata.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                kept.insert(kind)
            }
            return kept
        default:
            throw OptionError(option: "keep", "expected \"all\", \"none\" or a list of icc, exif, xmp, iptc")
        }
    }

    /// A built-in profile's name as is, or an ICC file's absolute path once it is known to be readable.
    private static func resolveProfile(_ profile: String, against base: URL) throws(OptionError) -> String {
        if builtInProfiles.contains(profile) { return profile }
        let path = URL(fileURLWithPath: profile, relativeTo: base).standardizedFileURL.path
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw OptionError(option: "iccProfile", "\(profile) is neither srgb, p3 nor cmyk, nor a readable ICC file (looked for \(path))")
        }
        return path
    }

    /// The `encode` object's shape: one variant per format, each with exactly its options.
    static var shape: ValueShape {
        .tagged(key: "format", variants: Format.allCases.map { format in
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
        let metadata: [Option] = [
            .boolean("strip", default: false, help: "remove metadata (EXIF, XMP, IPTC, ICC profile); the same as keep: \"none\""),
            Option("keep", .anyOf([.choice(["all", "none"]), .array(.choice(Metadata.allCases.map(\.rawValue)), minCount: 0)]),
                   default: JSONNode(plain: "all"),
                   help: "metadata kept from the input: \"all\", \"none\" or a list of icc, exif, xmp, iptc (not with strip)"),
            Option("iccProfile", .string(nonEmpty: true),
                   help: "convert to this colour profile and embed it: srgb, p3 (Display P3), cmyk, or an ICC file's path"),
        ]
        let quality = QualityTarget.option(for: format)
        let lossless = Option.boolean("lossless", default: false, help: "lossless compression")
        switch format {
        case .jpeg: return [
                quality,
                .boolean("progressive", default: false, help: "progressive (interlaced) JPEG"),
                .choice("chromaSubsampling", ChromaSubsampling.self, default: .auto,
                        help: "chroma subsampling; auto subsamples below quality 90"),
                .colour("background", default: "#ffffff", help: "colour that transparent pixels are flattened onto"),
            ] + metadata
        case .png: return [
                .integer("compression", in: 0...9, default: 6, help: "zlib compression level, 0–9"),
                .boolean("palette", default: false, help: "quantise to an 8-bit palette (much smaller files)"),
                .integer("quality", in: 1...100, default: defaultQuality(.png), help: "palette quantisation quality, 1–100"),
                .integer("effort", in: 1...10, default: defaultEffort(.png), help: "palette quantisation effort, 1–10"),
            ] + metadata
        case .webp: return [
                quality, lossless,
                .integer("effort", in: 0...6, default: defaultEffort(.webp), help: "CPU effort, 0 (fast) – 6 (small)"),
            ] + metadata
        case .avif, .heic: return [
                quality, lossless,
                .integer("effort", in: 0...9, default: defaultEffort(format), help: "CPU effort, 0 (fast) – 9 (small)"),
            ] + (format == .heic ? [.choice("chromaSubsampling", ChromaSubsampling.self, default: .auto,
                                            help: "chroma subsampling; auto subsamples below quality 90")] : [])
              + metadata
        case .gif: return [
                .integer("effort", in: 1...10, default: defaultEffort(.gif), help: "palette quantisation effort, 1 (fast) – 10 (best)"),
                .number("dither", in: 0...1, default: 1, help: "amount of dithering, 0 (none) – 1"),
                .integer("bitdepth", in: 1...8, default: 8, help: "bits a pixel, 1–8 (2 to 256 colours)"),
                .number("interFrameMaxError", in: 0...32, default: 0,
                        help: "largest error for which a pixel repeats the frame before (transparent), 0–32; 0 turns it off"),
                .boolean("reuse", default: false, help: "reuse the frame before's palette while interPaletteMaxError allows"),
                .number("interPaletteMaxError", in: 0...256, default: 3,
                        help: "largest error for which the frame before's palette is reused, 0–256"),
                .integer("loop", in: 0...65535, default: 0, help: "how many times an animation plays, 0 for ever"),
            ] + metadata
        case .jxl: return [
                QualityTarget.option(for: .jxl, help: "quality, 1–100 (not with distance)"),
                .number("distance", in: 0...15, help: "Butteraugli distance, 0–15: 1.0 is visually lossless (not with quality)"),
                .integer("effort", in: 3...9, default: defaultEffort(.jxl), help: "CPU effort, 3 (fast) – 9 (small)"),
                lossless,
            ] + metadata
        case .tiff: return [
                .choice("compression", TIFFCompression.self, default: TIFFCompression.none, help: "compression"),
                .choice("predictor", TIFFPredictor.self, default: .horizontal,
                        help: "prediction before deflate, lzw or zstd compression (float for floating-point images)"),
                .integer("quality", in: 1...100, default: defaultQuality(.tiff), help: "quality of jpeg and webp compression, 1–100"),
                .boolean("tile", default: false, help: "write square tiles instead of strips"),
                .integer("tileSize", in: 16...4096, default: 256, help: "tile side in pixels, a multiple of 16 (with tile)"),
                .boolean("pyramid", default: false, help: "add half-size levels down to one tile (tiled), for zooming viewers"),
            ] + metadata
        }
    }

    /// What the encoder holds beside the image while it writes one of `pixels` pixels (`alpha`:
    /// with an alpha band), so that admission by memory can count the encodes that run side by
    /// side (one lane per core).
    ///
    /// `Benchmarks/encoder-memory.sh` measures it: the peak of libvips' saver over a plain copy
    /// of the same image, one thread, photographs at 1920×1080 and 3840×2160 (see Benchmarks/RESULTS.md,
    /// "Memory of the encoders"). Each figure here is a line over the most any of them took.
    /// AV1 took 45–91 MB and 150–212 MB, except one image at 3840×2160 (a photo enlarged twice
    /// and saved as JPEG again) that took 770 MB (93 bytes a pixel) at efforts 4 and 9 and
    /// lossless alike: content decides, so AV1 is counted at that. Lossless WebP, and lossy WebP
    /// with alpha (libwebp compresses the alpha plane losslessly), took up to 82 and 305 MB;
    /// lossy WebP without alpha up to 10.4 bytes a pixel; a palette PNG's quantiser 44–54 and
    /// 50–90 MB; a progressive JPEG's coefficients 2.9 bytes a pixel. Baseline JPEG and plain
    /// PNG write row by row.
    ///
    /// The new savers were measured the same way (the script's savers for them are listed in
    /// the README's table), and each line lies over the most they took. The GIF saver holds
    /// the frame and libimagequant's histogram: a fixed part and a little a pixel, alike at
    /// every effort. JPEG XL holds the whole image as floating-point planes and more for
    /// lossless; efforts 8 and 9 (only 9 was measured) search far wider and hold several
    /// times as much, so they are counted apart. HEIC (x265) holds the frame in YUV and its
    /// lookahead, far less than AV1, at every effort. A TIFF writes as it goes, in strips or
    /// in tiles, pyramid or not; only zstd's compressor holds a large context.
    func workingBytes(pixels: Int, alpha: Bool) -> Int64 {
        let pixels = Int64(pixels)
        if qualityTarget != nil { return QualitySearch.workingBytes(pixels: pixels, alpha: alpha, encoder: encoderBytes(pixels, alpha: alpha)) }
        return encoderBytes(pixels, alpha: alpha)
    }

    private func encoderBytes(_ pixels: Int64, alpha: Bool) -> Int64 {
        switch format {
        case .avif: return 52_000_000 + 94 * pixels
        case .webp: return lossless || alpha ? 8_000_000 + 36 * pixels : 11 * pixels
        case .png: return palette ? 42_000_000 + 6 * pixels : 0
        case .jpeg: return progressive ? 3 * pixels : 0
        case .gif: return 60_000_000 + 5 * pixels
        case .jxl: return 16_000_000 + (effort >= 8 ? 290 : lossless ? 95 : 80) * pixels
        case .heic: return 16_000_000 + 20 * pixels
        case .tiff: return tiffCompression == .zstd ? 120_000_000 + 5 * pixels : 4_000_000
        }
    }

    /// The libvips saver suffix with options, for example `.webp[Q=80,effort=4,strip=true]`.
    var vipsSuffix: String {
        var options: [String] = []
        switch format {
        case .jpeg:
            options += ["Q=\(quality)", "interlace=\(progressive)"]
            options += subsampleOption
        case .png:
            options += ["compression=\(compression)", "palette=\(palette)"]
            if palette { options += ["Q=\(quality)", "effort=\(effort)"] }
        case .webp:
            options += ["Q=\(quality)", "lossless=\(lossless)", "effort=\(effort)"]
        case .avif:
            options += ["Q=\(quality)", "lossless=\(lossless)", "effort=\(effort)", "compression=av1"]
        case .heic:
            options += ["Q=\(quality)", "lossless=\(lossless)", "effort=\(effort)", "compression=hevc"]
            options += subsampleOption
        case .gif:
            options += ["effort=\(effort)", "dither=\(dither)", "bitdepth=\(bitDepth)", "interframe_maxerror=\(interFrameMaxError)",
                        "reuse=\(reusePalette)", "interpalette_maxerror=\(interPaletteMaxError)"]
        case .jxl:
            options += [distance.map { "distance=\($0)" } ?? "Q=\(quality)", "effort=\(effort)", "lossless=\(lossless)"]
        case .tiff:
            options += ["compression=\(tiffCompression.rawValue)", "predictor=\(predictor.rawValue)", "Q=\(quality)",
                        "tile=\(tile || pyramid)", "pyramid=\(pyramid)"]
            if tile || pyramid { options += ["tile_width=\(tileSize)", "tile_height=\(tileSize)"] }
        }
        if keptMetadata.isEmpty { options.append("strip=true") }
        return ".\(format.fileExtension)[\(options.joined(separator: ","))]"
    }

    private var subsampleOption: [String] {
        switch chromaSubsampling {
        case .auto: []
        case .subsample420: ["subsample_mode=on"]
        case .subsample444: ["subsample_mode=off"]
        }
    }

    /// The saver's options and what else decides the encoded file: the metadata kept when it
    /// is some but not all, the profile converted to, a GIF's loop count. For the journal's
    /// record of what made an output (the saver's options alone for what earlier versions
    /// wrote, so their outputs stay up to date) and for `explain`.
    var identity: String {
        let partial = !keep.isEmpty && keep.count < Metadata.allCases.count
        return vipsSuffix + (partial ? " keep=\(Metadata.allCases.filter(keep.contains).map(\.rawValue).joined(separator: "+"))" : "")
            + (iccProfile.map { " iccProfile=\($0)" } ?? "") + (format == .gif ? " loop=\(loop)" : "")
            + (qualityTarget.map { " " + $0.identity } ?? "")
    }
}
