import Foundation
import Vips

/// How an output is encoded: the format and its options, from an output's `encode` object.
public struct EncoderSettings: Sendable, Hashable {
    /// The image formats pipeline writes.
    public enum Format: String, CaseIterable, Sendable {
        /// JPEG, PNG, WebP, AVIF (AV1), GIF, JPEG XL, HEIC (HEVC) and TIFF, by the names `format` takes.
        case jpeg, png, webp, avif, gif, jxl, heic, tiff

        /// The usual file extension, also the `{format}` placeholder: `jpg` for JPEG, the
        /// format's own name for the others (`tiff`, not `tif`).
        public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

        /// Whether the format writes animations: GIF, WebP and AVIF (an image sequence) outputs
        /// of an animated input keep every frame (`DecompressSettings.animation`).
        public var animates: Bool { self == .gif || self == .webp || self == .avif }

        /// The MIME type of files in this format: an S3 object's and a served file's
        /// `Content-Type`, and the type in manifests and `<source type>`.
        public var mimeType: String {
            switch self {
            case .jpeg: "image/jpeg"
            case .png: "image/png"
            case .webp: "image/webp"
            case .avif: "image/avif"
            case .gif: "image/gif"
            case .jxl: "image/jxl"
            case .heic: "image/heic"
            case .tiff: "image/tiff"
            }
        }

        /// The format a file extension names (`jpg`, `JPEG`, `tif`, `heif`, …), or nil for one
        /// that names no format pipeline writes.
        public init?(fileExtension: some StringProtocol) {
            let lowercased = fileExtension.lowercased()
            guard let format = Self.allCases.first(where: { $0.acceptedExtensions.contains(lowercased) }) else { return nil }
            self = format
        }

        /// Every format's usual extension, for a message that lists them: `.jpg, .png, …`.
        public static var fileExtensionList: String { allCases.map { "." + $0.fileExtension }.joined(separator: ", ") }

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

    /// JPEG, AVIF and HEIC chroma subsampling.
    public enum ChromaSubsampling: String, CaseIterable, Sendable {
        /// Subsampled (4:2:0) below quality 90, full (4:4:4) from it.
        case auto
        /// Colour at half the width and half the height: smaller files.
        case subsample420 = "4:2:0"
        /// Colour at full resolution: sharp coloured edges.
        case subsample444 = "4:4:4"
    }

    /// The metadata an output keeps from its input, as sharp names them.
    public enum Metadata: String, CaseIterable, Sendable {
        /// The colour profile, EXIF, XMP and IPTC blocks.
        case icc, exif, xmp, iptc
    }

    /// TIFF compression.
    public enum TIFFCompression: String, CaseIterable, Sendable {
        /// Uncompressed, or compressed by deflate, LZW, JPEG, WebP or zstd.
        case none, deflate, lzw, jpeg, webp, zstd
    }

    /// TIFF prediction before deflate, LZW or zstd compression.
    public enum TIFFPredictor: String, CaseIterable, Sendable {
        /// No prediction, horizontal differencing, or floating-point prediction.
        case none, horizontal, float
    }

    /// The format written.
    public var format: Format
    /// 1–100; for PNG, the quality of palette quantisation; for TIFF, of JPEG and WebP compression.
    public var quality: Int
    /// The score each image's quality is searched for instead of `quality`, when given.
    public var qualityTarget: QualityTarget?
    /// The metadata kept from the input (the rest is removed before saving); `defaultKeep`
    /// unless the file says otherwise.
    public var keep: Set<Metadata>
    /// What an output keeps unless told: the colour profile, which the pixels need to look as
    /// they did, and nothing personal (EXIF, with its camera and GPS position, XMP, IPTC), as
    /// sharp, imgproxy and the web frameworks publish none of it by default. The orientation
    /// EXIF carries is applied to the pixels when the input is decoded (`autorotate`).
    public static let defaultKeep: Set<Metadata> = [.icc]
    /// Remove metadata (EXIF, XMP, comments, the colour profile): `keep` is empty. Viewers
    /// assume sRGB without a profile. Set to false, `keep` is `defaultKeep`.
    public var strip: Bool {
        get { keep.isEmpty }
        set { keep = newValue ? [] : Self.defaultKeep }
    }
    /// What the saver writes: `keep`, and the profile `iccProfile` embeds.
    var keptMetadata: Set<Metadata> {
        iccProfile == nil ? keep : keep.union([.icc])
    }
    /// The profile the pixels are converted to and embedded with (`srgb`, `p3`, `cmyk` or an
    /// ICC file's absolute path); nil leaves them as they are.
    public var iccProfile: String?

    /// `iccProfile` when it is a file (a file a run reads), not a built-in profile's name: by the
    /// time the settings are read, a file's is an absolute path.
    package var iccProfileFile: String? { iccProfile.flatMap { $0.hasPrefix("/") ? $0 : nil } }
    /// JPEG: progressive (interlaced) rather than baseline.
    public var progressive: Bool
    /// JPEG, AVIF and HEIC chroma subsampling.
    public var chromaSubsampling: ChromaSubsampling
    /// PNG zlib level, 0–9.
    public var compression: Int
    /// PNG: quantised to an 8-bit palette.
    public var palette: Bool
    /// WebP, AVIF, HEIC and JPEG XL: lossless compression.
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
    /// GIF: how many times an animation plays, 0 for ever; nil keeps the input's loop count.
    public var loop: Int?
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

    /// Settings for `format` with each option not given at its default; `quality` and `effort`
    /// default per format.
    public init(
        format: Format, quality: Int? = nil, strip: Bool = false, progressive: Bool = false,
        chromaSubsampling: ChromaSubsampling = .auto, compression: Int = 6, palette: Bool = false,
        lossless: Bool = false, effort: Int? = nil, background: [Double] = [255, 255, 255, 255]
    ) {
        self.format = format
        self.quality = quality ?? Self.defaultQuality(format)
        self.keep = strip ? [] : Self.defaultKeep
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
        loop = nil
        tiffCompression = TIFFCompression.none
        predictor = .horizontal
        tile = false
        tileSize = 256
        pyramid = false
    }

    /// The lowest quality a JPEG XL is made at. libvips 8.14 turns a lower one into a distance
    /// past the 25 libjxl takes, and libjxl then refuses it and encodes at its default distance
    /// (the file of quality 90).
    static let lowestJXLQuality = 5

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

    /// What the encoder holds beside the image while it writes one of `pixels` pixels (`alpha`:
    /// with an alpha band), so that admission by memory can count the encodes that run side by
    /// side (one lane per core).
    ///
    /// Each line lies over the most `Benchmarks/encoder-memory.sh` saw the saver take above a plain
    /// copy of the same image (the figures are in Benchmarks/RESULTS.md, "Memory of the encoders").
    /// AV1 is counted at the worst image seen, because content, not effort, decides what it holds.
    /// Lossless WebP, and lossy WebP with alpha, hold more than lossy WebP without alpha because
    /// libwebp compresses the alpha plane losslessly. A palette PNG holds the quantiser's
    /// histogram, a progressive JPEG its coefficients; baseline JPEG and plain PNG write row by
    /// row. GIF holds the frame and libimagequant's histogram. JPEG XL holds the whole image as
    /// floating-point planes, more for lossless, and its highest efforts search far wider, so
    /// they are counted apart. HEIC (x265) holds the frame in YUV and its lookahead. A TIFF writes
    /// as it goes; only zstd's compressor holds a large context.
    func workingBytes(pixels: Int, alpha: Bool) -> Int64 {
        let pixels = Int64(pixels)
        if qualityTarget != nil {
            return QualitySearch.workingBytes(pixels: pixels, alpha: alpha, encoder: encoderBytes(pixels, alpha: alpha))
        }
        return encoderBytes(pixels, alpha: alpha)
    }

    /// What the encoder holds while it writes an animation of `frames` frames of `framePixels`
    /// pixels each (`alpha`: with an alpha band): GIF and WebP are given every frame at once; an
    /// AVIF sequence is given one frame at a time, and what AV1 holds grows with a frame's size
    /// (the frames it looks ahead to, a few times one frame), not with the frames, and an alpha
    /// plane has an encoder of its own (Benchmarks/RESULTS.md, "Memory of the encoders").
    func workingBytes(framePixels: Int, frames: Int, alpha: Bool) -> Int64 {
        guard frames > 1, format == .avif else { return workingBytes(pixels: framePixels * frames, alpha: alpha) }
        return 52_000_000 + (alpha ? 560 : 400) * Int64(framePixels)
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
            // Lossless only in full chroma: libheif's default halves it, and the pixels change.
            options += lossless ? ["subsample_mode=off"] : subsampleOption
        case .gif:
            options += [
                "effort=\(effort)", "dither=\(dither)", "bitdepth=\(bitDepth)", "interframe_maxerror=\(interFrameMaxError)",
                "reuse=\(reusePalette)", "interpalette_maxerror=\(interPaletteMaxError)",
            ]
        case .jxl:
            let jxlQuality = Swift.max(quality, Self.lowestJXLQuality)
            options += [distance.map { "distance=\($0)" } ?? "Q=\(jxlQuality)", "effort=\(effort)", "lossless=\(lossless)"]
        case .tiff:
            options += [
                "compression=\(tiffCompression.rawValue)", "predictor=\(predictor.rawValue)", "Q=\(quality)",
                "tile=\(tile || pyramid)", "pyramid=\(pyramid)",
            ]
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

    /// How `explain` shows the encoder: its `identity`, where a quality target shows its
    /// quality as `Q=searched`, since the value the settings hold is not what the files get.
    var explained: String {
        // Every kind kept is no part of `identity` (so files made before the kinds were named
        // stay current), and is the setting that publishes camera and place: shown all the same.
        let shown = keep.count == Metadata.allCases.count ? vipsSuffix + " keep=all" + identity.dropFirst(vipsSuffix.count) : identity
        guard qualityTarget != nil else { return shown }
        return shown.replacingOccurrences(of: "Q=\(quality)", with: "Q=searched")
    }

    /// The saver's options and what else decides the encoded file: the metadata kept when it
    /// is some but not all, the profile converted to, a GIF's loop count. For the journal's
    /// record of what made an output (the saver's options alone for what earlier versions
    /// wrote, so their outputs stay up to date) and for `explain`.
    var identity: String {
        let partial = !keep.isEmpty && keep.count < Metadata.allCases.count
        return vipsSuffix + (partial ? " keep=\(Metadata.allCases.filter(keep.contains).map(\.rawValue).joined(separator: "+"))" : "")
            + (iccProfile.map { " iccProfile=\($0)" } ?? "") + (format == .gif ? loop.map { " loop=\($0)" } ?? "" : "")
            + (qualityTarget.map { " " + $0.identity } ?? "")
    }
}

extension EncoderSettings.Metadata {
    /// The fields of `image` that hold metadata beside its colour profile (EXIF, XMP, IPTC, and
    /// PNG text chunks): what a file answered as it stands would publish.
    package static func fieldsBesidesColour(of image: VipsImage) -> [String] {
        image.fieldNames.filter { ImageEncoder.metadataKind(of: $0).map { $0 != .icc } ?? false }
    }
}
