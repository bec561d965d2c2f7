import Foundation
import Vips

/// Encodes a processed image with an output's encoder settings.
enum ImageEncoder {
    /// An image ready for its saver, and the metadata fields dropped (each with why), for the
    /// run's warnings.
    struct Prepared {
        let image: VipsImage
        let dropped: [String]
        /// The image it was prepared from, which a deadline may watch (`VipsDeadline.watching`).
        let source: VipsImage
    }

    /// What an encode left out and, for a quality target, what its search chose.
    struct Encoded {
        /// The metadata fields dropped, each with why.
        let dropped: [String]
        /// The quality search's choice, when the settings have a target.
        let search: QualitySearch.Outcome?
    }

    /// Encodes `image` into an open file; with a quality target, the file the search chose.
    @discardableResult
    static func encode(_ image: VipsImage, with settings: EncoderSettings, into descriptor: Int32) throws(VipsError) -> Encoded {
        let prepared = try prepare(image, for: settings)
        let dropsEXIF = dropsSaverEXIF(prepared.image, settings: settings)
        // AVIF is written by libavif, and a HEIC file is checked before it is written (below).
        // libvips' WebP saver makes the whole file in memory: it is taken out of memory here
        // instead, to take out its EXIF block of libvips' making (`SaverEXIF`).
        // A PNG keeping EXIF is taken out of memory too, to leave out libpng's second EXIF chunk.
        let streams =
            settings.format != .avif && settings.format != .heic && (settings.format != .webp || !dropsEXIF)
            && (settings.format != .png || !prepared.image.hasField("exif-data"))
        guard settings.qualityTarget != nil || !streams else {
            if settings.format == .jpeg, dropsEXIF {
                try prepared.image.writeJPEGWithoutEXIF(toDescriptor: descriptor, suffix: settings.vipsSuffix)
            } else {
                try prepared.image.write(toDescriptor: descriptor, suffix: saverSuffix(settings.vipsSuffix, for: prepared.image, settings))
            }
            return Encoded(dropped: prepared.dropped, search: nil)
        }
        let (data, outcome) = try encodedBytes(prepared, with: settings)
        let failure = data.withUnsafeBytes { DescriptorWrite.all($0, to: descriptor) }
        guard failure == 0 else {
            throw VipsError(operation: "save", message: "cannot write the encoded file: \(String(cString: strerror(failure)))")
        }
        return Encoded(dropped: prepared.dropped, search: outcome)
    }

    /// The encoded bytes of `prepared`: the saver's, or the file a quality search chose.
    static func encodedBytes(_ prepared: Prepared, with settings: EncoderSettings) throws(VipsError) -> (Data, QualitySearch.Outcome?) {
        guard settings.qualityTarget != nil else { return (try savedBytes(prepared.image, with: settings), nil) }
        if let frameHeight = AVIFOutput.frameHeight(of: prepared.image) {
            // SSIMULACRA 2 scores one still image against another: an animation's frames would
            // each need their own search, and one quality for all of them is what `quality` is.
            throw VipsError(
                operation: "ssimulacra2",
                message: "a quality target scores still images, and this \(settings.format.rawValue) output is an animation of "
                    + "\(prepared.image.height / frameHeight) frames: " + QualityTarget.animationAdvice)
        }
        let outcome = try QualitySearch.run(prepared.image, settings: settings, stoppedWith: prepared.source)
        return (outcome.data, outcome)
    }

    /// `image` (prepared for `settings`) as its saver writes it: AVIF through libavif
    /// (`AVIFOutput`), the rest through libvips' savers with `suffix`, `settings.vipsSuffix`
    /// unless a caller adds to it.
    static func savedBytes(_ image: VipsImage, with settings: EncoderSettings, suffix: String? = nil) throws(VipsError) -> Data {
        if settings.format == .avif { return try AVIFOutput.encoded(image, settings: settings) }
        var data = try image.encoded(suffix: saverSuffix(suffix ?? settings.vipsSuffix, for: image, settings))
        if settings.format == .heic { try checkHEIC(data, of: image) }
        if settings.format == .png { data = PNGChunks.withOneEXIF(data) }
        // Bytes in memory, for a quality search or a format written whole: JPEG's and WebP's
        // EXIF block of libvips' making is taken out here (`SaverEXIF`).
        return dropsSaverEXIF(image, settings: settings) ? SaverEXIF.removed(from: data, format: settings.format) : data
    }

    /// The saver's options for `image`: `suffix`, but a JPEG not turned upright (`autorotate:
    /// false`) is saved without strip when nothing is kept, so that its saver writes the
    /// orientation viewers need in the EXIF block of its making. What is not kept was removed
    /// from the image already (`prepare`), so nothing else comes with it.
    static func saverSuffix(_ suffix: String, for image: VipsImage, _ settings: EncoderSettings) -> String {
        guard settings.format == .jpeg, image.orientation > 1 else { return suffix }
        return suffix.replacingOccurrences(of: ",strip=true", with: "")
    }

    /// Whether the file goes without the EXIF block libvips' savers make of their own
    /// (`SaverEXIF`): EXIF is not kept, and the image is upright, so that the block would say
    /// nothing a viewer needs. An orientation not turned upright (`autorotate: false`) stays in
    /// it, for viewers to turn the image.
    static func dropsSaverEXIF(_ image: VipsImage, settings: EncoderSettings) -> Bool {
        !settings.keptMetadata.contains(.exif) && image.orientation <= 1
    }

    /// Fails a HEIC file that holds no image: x265 refuses some long, thin pictures (16 × 5,000
    /// pixels), and libheif then writes the container without one and reports success.
    static func checkHEIC(_ data: Data, of image: VipsImage) throws(VipsError) {
        let header = try? VipsImage.open(data: data, options: "unlimited")
        guard let header, header.width == image.width, header.height == image.height else {
            throw VipsError(
                operation: "heifsave",
                message: "x265 coded no picture of \(image.width)×\(image.height) (it refuses some long, thin shapes), "
                    + "and libheif wrote a file without one: write this output as AVIF, or crop it less thin")
        }
    }

    /// The longest side a WebP file holds: its header has 14 bits for each.
    static let webpLargestSide = 16383

    /// The shortest delay, in milliseconds, a browser shows a GIF frame for as written.
    static let shortestGIFDelay = 20
    /// The most plays a WebP animation's loop count holds.
    static let mostWebPLoops = 65_535

    /// The longest side a GIF file holds: its header has 16 bits for each.
    static let gifLargestSide = 65535

    /// The longest side libjpeg codes.
    static let jpegLargestSide = 65500

    /// The longest side libheif reads: x265 codes larger pictures, and libheif writes them, but
    /// its readers (libvips', browsers', viewers') refuse them as past its security limit.
    static let heicLargestSide = 16384

    static func prepare(_ source: VipsImage, for settings: EncoderSettings) throws(VipsError) -> Prepared {
        // Said here, the same each time: libwebp's own refusal reaches libvips' error buffer in
        // a race with the other encodes, and is sometimes lost to "save failed".
        let side = max(source.width, source.frameSize.height)
        if settings.format == .webp, side > webpLargestSide {
            throw VipsError(
                operation: "webpsave",
                message: "image too large: a WebP side holds at most \(webpLargestSide) pixels, and this is "
                    + "\(source.width)×\(source.frameSize.height)")
        }
        // libvips' own refusal says only "frame too large".
        if settings.format == .gif, side > gifLargestSide {
            throw VipsError(
                operation: "gifsave",
                message: "image too large: a GIF side holds at most \(gifLargestSide) pixels, and this is "
                    + "\(source.width)×\(source.frameSize.height)")
        }
        // libvips' own refusal reaches its error buffer in a race with the other encodes.
        if settings.format == .jpeg, side > jpegLargestSide {
            throw VipsError(
                operation: "jpegsave",
                message: "image too large: a JPEG side holds at most \(jpegLargestSide) pixels, and this is "
                    + "\(source.width)×\(source.frameSize.height)")
        }
        if settings.format == .heic, side > heicLargestSide {
            throw VipsError(
                operation: "heifsave",
                message: "image too large: libheif reads a HEIC side of at most \(heicLargestSide) pixels, and this is "
                    + "\(source.width)×\(source.frameSize.height)")
        }
        var image = source
        let tiffCompression = settings.format == .tiff ? settings.tiffCompression : nil
        // A strip is a row of the whole width, and libtiff writes one WebP can not code as a strip
        // without its pixels, reporting success.
        if tiffCompression == .webp, !(settings.tile || settings.pyramid), source.width > webpLargestSide {
            throw VipsError(
                operation: "tiffsave",
                message: "image too wide for WebP compression in strips: a WebP holds at most \(webpLargestSide) pixels a "
                    + "side, and this is \(source.width) pixels wide: add \"tile\": true, or use another compression")
        }
        if tiffCompression == .jpeg || tiffCompression == .webp {
            // libtiff's WebP codec takes colour alone, and writes a grey image as a file no
            // reader decodes, or fails; its JPEG codec drops alpha, leaving what lay under it.
            if image.isGreyscale { image = try image.inColour() }
        }
        // The predictor works for the lossless compressions alone.
        if settings.predictor == .float, let tiffCompression, [.deflate, .lzw, .zstd].contains(tiffCompression), image.bandFormat != .float
        {
            // libtiff writes such a file without its pixels, saying so only for larger images.
            throw VipsError(
                operation: "tiffsave",
                message: "predictor float is for images of floating-point samples, and this one has \(image.bandFormat) samples: "
                    + "use predictor horizontal")
        }
        if settings.format == .jpeg || tiffCompression == .jpeg, image.hasAlpha {
            // JPEG has no alpha: composite onto the background instead of dropping the band,
            // which would turn transparent areas into whatever colour they happened to hold.
            // Before a profile: the background is an sRGB colour, and a CMYK one has four bands.
            image = try image.flattened(ontoSRGB: settings.background)
        }
        if let profile = settings.iccProfile {
            // A profile file is opened here, as a regular file, and libvips reads it through that
            // descriptor: its name may be replaced at any moment, by a FIFO too, whose open would
            // hold libvips, and the run, for ever. (libvips' operation cache is off, so a
            // descriptor's number reused later names no stale profile.)
            var opened: RegularFile?
            if let file = settings.iccProfileFile {
                do throws(RegularFile.Failure) {
                    opened = try RegularFile(opening: file)
                } catch {
                    throw VipsError(operation: "icc_transform", message: "encode.iccProfile \(file): \(error.reason)")
                }
            }
            let source = opened.map { "/proc/self/fd/\($0.descriptor)" } ?? profile
            // lcms takes sRGB to the profile: a greyscale image is made colour first, without
            // a grey profile of its own, which would not fit its colour bands.
            if image.isGreyscale { image = try image.inColour().removingFields(["icc-profile-data"]) }
            do throws(VipsError) {
                image = try withExtendedLifetime(opened) { () throws(VipsError) in try image.convertedToProfile(source) }
            } catch {
                // The file was checked when the pipeline loaded; one changed since is named, with
                // libvips' reason as a report gives it (another thread's stray lines left out).
                guard let file = settings.iccProfileFile else { throw error }
                throw VipsError(
                    operation: "icc_transform",
                    message: "encode.iccProfile \(file) is not a profile libvips can use now: " + ItemError.reason(for: error))
            }
        }
        if let delays = image.frameDelays, let longest = longestDelay(settings.format) {
            // As the WebP saver and the AVIF sequence write them: browsers show a GIF frame of
            // 10 ms or less for a tenth of a second, other players as fast as they can. A delay
            // longer than the format holds is cut to the longest it holds: it would wrap round,
            // or fail the file.
            // A GIF counts in hundredths of a second, and browsers show a frame of one for a
            // tenth too: a delay the saver would round down to one is written at two, the nearest
            // they play as written.
            let short = settings.format == .gif ? VipsImage.shortestDelay : -1
            let written = delays.map { delay in
                if delay <= short { return VipsImage.defaultDelay }
                if settings.format == .gif { return min(max(delay, Self.shortestGIFDelay), longest) }
                return min(delay, longest)
            }
            if written != delays { image = try image.settingFrameDelays(written) }
        }
        if settings.format == .gif, let loop = settings.loop {
            // The GIF saver takes the loop count from the image, not from an option; without
            // one it writes the input's (which the decoder and the steps keep).
            image = try image.settingIntField("loop", to: loop)
        }
        if settings.format == .webp, let loop = image.intField("loop"), loop > Self.mostWebPLoops {
            // WebP counts plays in 16 bits, 0 for ever: a GIF's 65,535 repeats (65,536 plays)
            // would wrap round to for ever. One play fewer is the nearest WebP holds.
            image = try image.settingIntField("loop", to: Self.mostWebPLoops)
        }
        // libvips 8.14's savers know only strip (all or nothing): what is not kept is removed
        // from a copy, and the copy saved without strip unless nothing is kept. Removed even
        // then: 8.14's WebP saver writes the profile and EXIF despite strip.
        let names = image.fieldNames
        let kept = settings.keptMetadata
        let unkept = names.filter { name in
            guard let kind = metadataKind(of: name) else { return false }
            return !kept.contains(kind)
        }
        // A kept kind the format's saver cannot write is dropped with a warning, rather than
        // left out unsaid or, IPTC in TIFF, written malformed. Not the profile: the pixels are
        // sRGB by then, which a format without one means anyway.
        let unsaved = kept.subtracting(writableMetadata(settings.format)).subtracting([.icc])
        let unsavable = names.filter { metadataKind(of: $0).map(unsaved.contains) ?? false }
        let keptText = names.filter { $0.hasPrefix("png-comment-") && metadataKind(of: $0).map(kept.contains) == true }
        let unwritable = settings.format == .png ? keptText.filter { !isWritablePNGComment($0) } : []
        // PNG's text chunks have a place in PNG alone: the other savers pass over them without
        // a word.
        let pngText = settings.format != .png ? keptText.filter { metadataKind(of: $0).map(unsaved.contains) == false } : []
        // Of the Photoshop block JPEG carries IPTC in, the IPTC record alone (`PhotoshopResources`):
        // from a JPEG's block, a TIFF's bare record, or else a TIFF's own Photoshop block.
        var unreadable: [String] = []
        let iptcField = names.contains("iptc-data") ? "iptc-data" : "photoshop-data"
        if kept.contains(.iptc), !unsaved.contains(.iptc), let block = image.blobCopy(iptcField) {
            if let record = PhotoshopResources.iptcOnly(block) {
                if record != image.blobCopy("iptc-data") { image = try image.settingBlobField("iptc-data", to: record) }
            } else {
                unreadable = [iptcField]
            }
        }
        // JPEG's saver writes IPTC from its own field alone; the block would stay in the image.
        let photoshopBlock = names.contains("photoshop-data") && kept.contains(.iptc) && !unsaved.contains(.iptc) ? ["photoshop-data"] : []
        let oversized = oversizedMetadata(image, keeping: kept, format: settings.format)
        let tooLong = oversized.flatMap { blob in names.filter { metadataKind(of: $0) == metadataKind(of: blob.field) } }
        let removed = unkept + unsavable + unwritable + tooLong + pngText + unreadable + photoshopBlock
        if !removed.isEmpty { image = try image.removingFields(Array(Set(removed))) }
        let cannotWrite = ", which \(settings.format.rawValue) cannot write"
        return Prepared(
            image: image,
            // The blocks, not each EXIF tag libvips lists beside its block.
            dropped: unsavable.filter { !$0.hasPrefix("exif-ifd") }.map { $0 + cannotWrite }
                + unwritable.map {
                    "\($0) (libvips writes a PNG text key of 1–79 characters, without spaces or control characters)\(cannotWrite)"
                }
                + oversized.map { "\($0.field) (\($0.why))\(cannotWrite)" }
                + pngText.map { "\($0) (a PNG text chunk, which only PNG holds)\(cannotWrite)" }
                + unreadable.map { "\($0) (a Photoshop resource block without an IPTC record, or one that could not be read)" },
            source: source)
    }

    /// The kept EXIF and XMP blocks (by field name) too long for what `format`'s saver writes,
    /// and why: the one JPEG marker libvips writes each in (its JPEG saver would leave them out
    /// with no more than a log line), or the 1 MB of EXIF libvips reads back to update before
    /// it saves a PNG, WebP, AVIF or HEIC (those savers would fail the output, or put a block of
    /// libvips' own in its place). And an XMP packet with NUL bytes (UTF-16) in a PNG, whose
    /// saver writes it as text that ends at the first.
    static func oversizedMetadata(
        _ image: VipsImage, keeping kept: Set<EncoderSettings.Metadata>, format: EncoderSettings.Format
    ) -> [(field: String, why: String)] {
        let limits: [(String, Int, String)]
        switch format {
        case .jpeg:
            // A marker holds 65,533 bytes after its length; libvips 8.14 writes no XMP over 60,000.
            limits = [
                ("exif-data", 65533, "longer than the 64 KB one JPEG marker holds"),
                ("xmp-data", 60000, "longer than the 60,000 bytes libvips writes in a JPEG"),
            ]
        case .png, .webp, .avif, .heic: limits = [("exif-data", 1 << 20, "longer than the 1 MB of EXIF libvips writes")]
        case .tiff, .jxl, .gif: limits = []
        }
        let tooLong = limits.compactMap { field, limit, why -> (field: String, why: String)? in
            guard let kind = metadataKind(of: field), kept.contains(kind), let length = image.blobLength(field), length > limit else {
                return nil
            }
            return (field, why)
        }
        guard format == .png, kept.contains(.xmp), image.blobCopy("xmp-data")?.contains(0) == true else { return tooLong }
        return tooLong + [("xmp-data", "with NUL bytes, as a UTF-16 packet has, where the text PNG's saver writes ends")]
    }

    /// The longest frame delay, in milliseconds, `format` holds: GIF's 16 bits of hundredths of
    /// a second, WebP's 24 bits of milliseconds; nil for a format without frame delays or
    /// without such a limit (libavif's sequences take 64-bit timestamps).
    static func longestDelay(_ format: EncoderSettings.Format) -> Int? {
        switch format {
        case .gif: 655_350
        case .webp: 16_777_215
        default: nil
        }
    }

    /// The kinds of metadata `format`'s saver writes (libvips 8.14's, libavif for AVIF): IPTC
    /// only in JPEG (TIFF's tag would get the Photoshop block JPEG carries it in, which readers
    /// reject), EXIF and XMP neither in GIF nor in JPEG XL, EXIF not in TIFF.
    static func writableMetadata(_ format: EncoderSettings.Format) -> Set<EncoderSettings.Metadata> {
        switch format {
        case .jpeg: [.icc, .exif, .xmp, .iptc]
        case .png, .webp, .avif, .heic: [.icc, .exif, .xmp]
        case .tiff: [.icc, .xmp]
        case .jxl: [.icc]
        case .gif: []
        }
    }

    /// The kind of metadata the field `name` belongs to, or nil for a field that is not
    /// metadata of the four kinds `keep` names. A PNG's text chunks (Author, Comment…) and a
    /// TIFF's description are text written about the image, as XMP is, and go with it: the
    /// savers write them back, so kept by default they would publish a name or a note. A text
    /// chunk that holds a block of another kind, as ImageMagick and exiv2 keep EXIF in PNG
    /// (`Raw profile type exif`), is of that kind. The thumbnail a camera or an editor stores in
    /// the EXIF block is EXIF: libvips' savers build an EXIF block around it even with the block
    /// itself removed, and it shows the picture before any crop or edit.
    static func metadataKind(of name: String) -> EncoderSettings.Metadata? {
        switch name {
        case "icc-profile-data": .icc
        case "exif-data", "jpeg-thumbnail-data": .exif
        case "xmp-data", "image-description": .xmp
        // A TIFF's Photoshop block holds the IPTC record, and beside it a preview and copies of
        // the EXIF and XMP.
        case "iptc-data", "photoshop-data": .iptc
        default: name.hasPrefix("exif-ifd") ? .exif : name.hasPrefix("png-comment-") ? pngTextKind(of: name) : nil
        }
    }

    /// The kind of the PNG text chunk field `name` (`png-comment-N-KEY`): EXIF or IPTC for a raw
    /// profile chunk holding one (`Raw profile type exif`, `APP1`, `iptc`, `8bim`, as ImageMagick
    /// names them), else XMP's.
    static func pngTextKind(of name: String) -> EncoderSettings.Metadata {
        let lowered = name.lowercased()
        guard let range = lowered.range(of: "-raw profile type ") else { return .xmp }
        switch lowered[range.upperBound...].trimmingCharacters(in: .whitespaces) {
        case "exif", "app1": return .exif
        case "iptc", "8bim": return .iptc
        default: return .xmp
        }
    }

    /// Whether a `png-comment-N-KEY` field has a key the PNG saver writes as it is: 1–79 bytes
    /// (libpng's rule for keywords), no space and no control character; any other field is
    /// kept. libvips refuses the whole save ("bad png comment key") for a key it cannot read
    /// back, and cuts one at its first space.
    static func isWritablePNGComment(_ name: String) -> Bool {
        let prefix = "png-comment-"
        guard name.hasPrefix(prefix) else { return true }
        let rest = name.utf8.dropFirst(prefix.utf8.count)
        let digits = rest.prefix { $0 >= 0x30 && $0 <= 0x39 }
        let afterDigits = rest.dropFirst(digits.count)
        guard !digits.isEmpty, afterDigits.first == UInt8(ascii: "-") else { return false }
        let key = Array(afterDigits.dropFirst())
        // libvips 8.14's saver reads the key up to its first space: `Creation Time` would be
        // written as `Creation`.
        guard name.utf8.count <= 256, (1...79).contains(key.count) else { return false }
        return key.allSatisfy { $0 > 0x20 && $0 != 0x7F }
    }
}
