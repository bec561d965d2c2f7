import Foundation
import Vips

/// Reading an output's `encode` object into settings, once the object has been checked
/// against the declared options.
extension EncoderSettings {
    /// The profiles libvips has built in, by the names `iccProfile` takes.
    static let builtInProfiles = ["srgb", "p3", "cmyk"]

    /// Reads an `encode` object that was checked against `options(for: format)`; relative ICC
    /// file paths resolve against `options.baseDirectory`.
    init(format: Format, options: ProcessorOptions) throws(OptionError) {
        // Options the format does not declare keep the defaults of `init(format:)`.
        self.init(format: format)
        let declared = Set(Self.options(for: format).map(\.name))
        func has(_ name: String) -> Bool { declared.contains(name) }
        if has("quality"), let fixed = try QualityTarget.fixedQuality(options) { quality = fixed }
        if has("progressive") { progressive = try options.bool("progressive") }
        if has("chromaSubsampling") { chromaSubsampling = try options.choice("chromaSubsampling", as: ChromaSubsampling.self) }
        // TIFF's compression is another option (`tiffCompression`), read below.
        if format == .png { compression = try options.int("compression") }
        if has("palette") { palette = try options.bool("palette") }
        if has("lossless") { lossless = try options.bool("lossless") }
        if has("effort") { effort = try options.int("effort") }
        if has("background") {
            background = try options.colour("background")
            // Flattened onto, it leaves no transparency in the file: a see-through colour would be
            // used opaque, which is not what its alpha asks for.
            if background.count == 4, background[3] < 255 {
                throw OptionError(
                    option: "background", "a JPEG has no transparency, so the background must be opaque: give #rrggbb, not its alpha")
            }
        }
        keep = try Self.readKeep(options)
        qualityTarget = try QualityTarget.read(options, format: format)
        var isCMYK = false
        if let profile = try options.optionalString("iccProfile") {
            let resolved = try Self.resolveProfile(profile, against: options.baseDirectory)
            isCMYK = resolved.isCMYK
            iccProfile = resolved.path
            // A CMYK file too: converted to it, an RGB format's pixels would be its inks.
            if resolved.isCMYK, format != .jpeg, format != .tiff {
                let what = profile == "cmyk" ? "cmyk" : "\(profile) is a CMYK profile, which"
                throw OptionError(option: "iccProfile", "\(what) needs a format with CMYK: jpeg or tiff, not \(format.rawValue)")
            }
            // A grey file too: converted to it, the pixels are one band, which these formats
            // write as colour, tagged with a profile of one band that viewers refuse or ignore.
            if resolved.isGrey, [.webp, .avif, .heic].contains(format) {
                throw OptionError(
                    option: "iccProfile",
                    "\(profile) is a greyscale profile, which needs a format that holds grey: jpeg, png, tiff or jxl, not \(format.rawValue)"
                )
            }
            // A GIF cannot say which profile its colours are in, so every viewer takes them as
            // sRGB: converted to another, they would show wrong.
            if format == .gif, profile != "srgb" {
                throw OptionError(
                    option: "iccProfile", "gif has no place for a colour profile, so its colours are shown as sRGB: leave iccProfile out")
            }
        }
        switch format {
        case .gif:
            dither = try options.double("dither")
            bitDepth = try options.int("bitdepth")
            interFrameMaxError = try options.double("interFrameMaxError")
            reusePalette = try options.bool("reuse")
            interPaletteMaxError = try options.double("interPaletteMaxError")
            loop = try options.optionalInt("loop")
        case .png:
            // As in sharp: a quality or an effort is the palette's, so asking for one asks for a
            // palette, and one with the palette turned off could do nothing.
            let paletteOptions = ["quality", "effort"].filter(options.has)
            if !options.has("palette") {
                palette = !paletteOptions.isEmpty
            } else if !palette, let first = paletteOptions.first {
                throw OptionError(option: first, "\(first) is the palette's, which palette: false turns off: leave \(first) out")
            }
        case .jxl:
            if options.has("distance") {
                guard !options.has("quality") else {
                    throw OptionError(option: "distance", "give quality or distance, not both (distance 1.0 is about quality 90)")
                }
                distance = try options.double("distance")
            }
        case .tiff:
            tiffCompression = try options.choice("compression", as: TIFFCompression.self)
            // libtiff's WebP codec would take the black plate for alpha.
            if tiffCompression == .webp, isCMYK {
                throw OptionError(
                    option: "compression",
                    "webp holds red, green, blue and alpha alone: a CMYK iccProfile needs deflate, lzw, zstd, jpeg or none")
            }
            predictor = try options.choice("predictor", as: TIFFPredictor.self)
            tile = try options.bool("tile")
            tileSize = try options.int("tileSize")
            pyramid = try options.bool("pyramid")
            guard tileSize % 16 == 0 else {
                throw OptionError(option: "tileSize", "\(tileSize) is not a multiple of 16, as TIFF tiles must be")
            }
            if options.has("quality"), tiffCompression != .jpeg, tiffCompression != .webp {
                throw OptionError(
                    option: "quality",
                    "quality is that of jpeg or webp compression, and compression \"\(tiffCompression.rawValue)\" has none: "
                        + "choose one of them, or leave quality out")
            }
            if options.has("tileSize"), !tile, !pyramid {
                throw OptionError(option: "tileSize", "tileSize needs tile: true (or pyramid: true, which is tiled)")
            }
        case .jpeg, .webp, .avif, .heic:
            break
        }
        // WebP's lossless coding takes its quality as effort; the others' has no use for one.
        if lossless, [.avif, .heic, .jxl].contains(format), let given = ["quality", "distance"].first(where: options.has) {
            throw OptionError(option: given, "a lossless encode has no \(given): drop lossless or \(given)")
        }
        // A lossless encode keeps every colour sample, so 4:2:0 could only be ignored.
        if lossless, chromaSubsampling == .subsample420 {
            throw OptionError(
                option: "chromaSubsampling", "a lossless encode keeps colour whole (4:4:4): drop lossless or chromaSubsampling")
        }
    }

    /// `keep` from `"all"`, `"none"` or a list of kinds, or `strip: true` (`"none"`), else
    /// `defaultKeep`; both given is an error.
    private static func readKeep(_ options: ProcessorOptions) throws(OptionError) -> Set<Metadata> {
        let strip = try options.bool("strip")
        guard let node = options.value("keep") else { return strip ? [] : defaultKeep }
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
                    throw OptionError(
                        option: "keep", "\(item.jsonText) is not one of \(Metadata.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                kept.insert(kind)
            }
            return kept
        default:
            throw OptionError(option: "keep", "expected \"all\", \"none\" or a list of icc, exif, xmp, iptc")
        }
    }

    /// A built-in profile's name as is, or an ICC file's absolute path once it is known to be
    /// readable, with whether it is a CMYK or a greyscale profile (its header's colour space).
    private static func resolveProfile(_ profile: String, against base: URL) throws(OptionError) -> (
        path: String, isCMYK: Bool, isGrey: Bool
    ) {
        if builtInProfiles.contains(profile) { return (profile, profile == "cmyk", false) }
        let path = URL(fileURLWithPath: profile, relativeTo: base).standardizedFileURL.path
        // Opened without blocking: a FIFO would hold the check, and every command, for ever.
        let file: RegularFile
        do throws(RegularFile.Failure) {
            file = try RegularFile(opening: path)
        } catch {
            let why = error.code == ENOENT ? "" : ": \(error.reason)"
            throw OptionError(
                option: "iccProfile", "\(profile) is neither srgb, p3 nor cmyk, nor a readable ICC file\(why) (looked for \(path))",
                fileAtFault: path)
        }
        // An ICC profile's header has the signature "acsp" at byte 36: anything else would fail
        // every input's encode instead of the file's check.
        var bytes = [UInt8](repeating: 0, count: 40)
        let count = bytes.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, 40, 0) }
        let header = Data(bytes.prefix(max(count, 0)))
        guard header.count == 40, header.suffix(4).elementsEqual("acsp".utf8) else {
            throw OptionError(
                option: "iccProfile", "\(profile) is not an ICC profile: its header has no \"acsp\" signature (\(path))", fileAtFault: path)
        }
        // The size the header declares, at bytes 0 to 3: a file cut short fails every encode.
        let declared = header.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let stored = Int(file.status.st_size)
        if declared > stored {
            throw OptionError(
                option: "iccProfile", "\(profile) is cut short: its header declares \(declared) bytes and the file has \(stored) (\(path))",
                fileAtFault: path)
        }
        // The profile's class, at bytes 12 to 15: an abstract, device link or named colour
        // profile describes no colour space an image could be converted to.
        let profileClass = String(decoding: header.dropFirst(12).prefix(4), as: UTF8.self)
        guard ["mntr", "prtr", "scnr", "spac"].contains(profileClass) else {
            throw OptionError(
                option: "iccProfile",
                "\(profile) is a profile of class \"\(profileClass)\", which no image can be converted to: "
                    + "give a display, output, input or colour space profile (\(path))", fileAtFault: path)
        }
        // One pixel converted, as every encode will: an input-only profile (no tables from the
        // connection space) or a Lab space fails here, not on every input. Read through the
        // descriptor checked, as an encode reads it: the name may be another file by now.
        do {
            _ = try VipsImage(pixels: [128, 128, 128], width: 1, height: 1, bands: 3)
                .convertedToProfile("/proc/self/fd/\(file.descriptor)").rendered()
        } catch {
            throw OptionError(
                option: "iccProfile", "\(profile) is a profile no image can be converted to: \(error.message) (\(path))", fileAtFault: path)
        }
        // The data colour space, at bytes 16 to 19 of the header.
        let space = header.dropFirst(16).prefix(4)
        return (path, space.elementsEqual("CMYK".utf8), space.elementsEqual("GRAY".utf8))
    }
}
