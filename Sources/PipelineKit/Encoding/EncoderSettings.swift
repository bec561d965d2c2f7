/// How an output is encoded: the format and its options, from an output's `encode` object.
public struct EncoderSettings: Sendable, Hashable {
    /// The image formats pipeline writes.
    public enum Format: String, CaseIterable, Sendable {
        case jpeg, png, webp, avif

        /// The usual file extension, also the `{format}` placeholder.
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
            }
        }
    }

    /// JPEG chroma subsampling.
    public enum ChromaSubsampling: String, CaseIterable, Sendable {
        case auto
        case subsample420 = "4:2:0"
        case subsample444 = "4:4:4"
    }

    public var format: Format
    /// 1–100; for PNG, the quality of palette quantisation.
    public var quality: Int
    /// Remove metadata (EXIF, XMP, comments); the colour profile goes too, so viewers assume sRGB.
    public var strip: Bool
    public var progressive: Bool
    public var chromaSubsampling: ChromaSubsampling
    /// PNG zlib level, 0–9.
    public var compression: Int
    public var palette: Bool
    public var lossless: Bool
    /// CPU spent to make the file smaller: WebP 0–6, AVIF 0–9, PNG palette 1–10.
    public var effort: Int
    /// What transparent pixels become in formats without alpha (JPEG), RGBA 0–255.
    public var background: [Double]

    public init(
        format: Format, quality: Int? = nil, strip: Bool = false, progressive: Bool = false,
        chromaSubsampling: ChromaSubsampling = .auto, compression: Int = 6, palette: Bool = false,
        lossless: Bool = false, effort: Int? = nil, background: [Double] = [255, 255, 255, 255]
    ) {
        self.format = format
        self.quality = quality ?? Self.defaultQuality(format)
        self.strip = strip
        self.progressive = progressive
        self.chromaSubsampling = chromaSubsampling
        self.compression = compression
        self.palette = palette
        self.lossless = lossless
        self.effort = effort ?? Self.defaultEffort(format)
        self.background = background
    }

    static func defaultQuality(_ format: Format) -> Int {
        switch format {
        case .jpeg, .webp: 80
        case .png: 100
        case .avif: 50
        }
    }

    static func defaultEffort(_ format: Format) -> Int {
        switch format {
        case .webp: 4
        case .avif: 4
        case .png: 7
        case .jpeg: 0
        }
    }

    /// Reads an `encode` object that was checked against `options(for: format)`.
    init(format: Format, options: ProcessorOptions) throws(OptionError) {
        let declared = Set(Self.options(for: format).map(\.name))
        func has(_ name: String) -> Bool { declared.contains(name) }
        self.init(
            format: format,
            quality: try options.int("quality"),
            strip: try options.bool("strip"),
            progressive: has("progressive") ? try options.bool("progressive") : false,
            chromaSubsampling: has("chromaSubsampling") ? try options.choice("chromaSubsampling", as: ChromaSubsampling.self) : .auto,
            compression: has("compression") ? try options.int("compression") : 6,
            palette: has("palette") ? try options.bool("palette") : false,
            lossless: has("lossless") ? try options.bool("lossless") : false,
            effort: has("effort") ? try options.int("effort") : nil,
            background: has("background") ? try options.colour("background") : [255, 255, 255, 255]
        )
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
        }
    }

    /// The options an `encode` object of `format` accepts, besides `format` itself.
    static func options(for format: Format) -> [Option] {
        let strip = Option.boolean("strip", default: false, help: "remove metadata (EXIF, XMP, ICC profile)")
        switch format {
        case .jpeg: return [
                .integer("quality", in: 1...100, default: defaultQuality(.jpeg), help: "quality, 1–100"),
                .boolean("progressive", default: false, help: "progressive (interlaced) JPEG"),
                .choice("chromaSubsampling", ChromaSubsampling.self, default: .auto,
                        help: "chroma subsampling; auto subsamples below quality 90"),
                strip,
                .colour("background", default: "#ffffff", help: "colour that transparent pixels are flattened onto"),
            ]
        case .png: return [
                .integer("compression", in: 0...9, default: 6, help: "zlib compression level, 0–9"),
                .boolean("palette", default: false, help: "quantise to an 8-bit palette (much smaller files)"),
                .integer("quality", in: 1...100, default: defaultQuality(.png), help: "palette quantisation quality, 1–100"),
                .integer("effort", in: 1...10, default: defaultEffort(.png), help: "palette quantisation effort, 1–10"),
                strip,
            ]
        case .webp: return [
                .integer("quality", in: 1...100, default: defaultQuality(.webp), help: "quality, 1–100"),
                .boolean("lossless", default: false, help: "lossless compression"),
                .integer("effort", in: 0...6, default: defaultEffort(.webp), help: "CPU effort, 0 (fast) – 6 (small)"),
                strip,
            ]
        case .avif: return [
                .integer("quality", in: 1...100, default: defaultQuality(.avif), help: "quality, 1–100"),
                .boolean("lossless", default: false, help: "lossless compression"),
                .integer("effort", in: 0...9, default: defaultEffort(.avif), help: "CPU effort, 0 (fast) – 9 (small)"),
                strip,
            ]
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
    func workingBytes(pixels: Int, alpha: Bool) -> Int64 {
        let pixels = Int64(pixels)
        switch format {
        case .avif: return 52_000_000 + 94 * pixels
        case .webp: return lossless || alpha ? 8_000_000 + 36 * pixels : 11 * pixels
        case .png: return palette ? 42_000_000 + 6 * pixels : 0
        case .jpeg: return progressive ? 3 * pixels : 0
        }
    }

    /// The libvips saver suffix with options, for example `.webp[Q=80,effort=4,strip=true]`.
    var vipsSuffix: String {
        var options: [String] = []
        switch format {
        case .jpeg:
            options += ["Q=\(quality)", "interlace=\(progressive)"]
            switch chromaSubsampling {
            case .auto: break
            case .subsample420: options.append("subsample_mode=on")
            case .subsample444: options.append("subsample_mode=off")
            }
        case .png:
            options += ["compression=\(compression)", "palette=\(palette)"]
            if palette { options += ["Q=\(quality)", "effort=\(effort)"] }
        case .webp:
            options += ["Q=\(quality)", "lossless=\(lossless)", "effort=\(effort)"]
        case .avif:
            options += ["Q=\(quality)", "lossless=\(lossless)", "effort=\(effort)", "compression=av1"]
        }
        if strip { options.append("strip=true") }
        return ".\(format.fileExtension)[\(options.joined(separator: ","))]"
    }
}
