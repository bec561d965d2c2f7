import Foundation
import Vips

/// The decoder's passes over a file: the whole image, the windows of a windowed plan, or every
/// frame of an animation; each read by the first fast reader that takes it, else by libvips'
/// loader, and turned upright, into sRGB and rendered into memory while still small.
extension ImageDecoder {
    /// The passes `plan` asks for, each reading the file on its own: side by side, a lone very
    /// wide image keeps both cores busy (each pass is mostly the format's decoding, on one
    /// thread). The first failure, in pass order, is the input's.
    func decodePasses(
        _ plan: DecodePlan, of source: EncodedSource, header: VipsImage, loader: String, originalSize: ImageSize,
        deadline: VipsDeadline
    ) throws -> DecodedImage {
        guard !plan.windows.isEmpty else {
            let whole = try decodeWhole(source, header: header, loader: loader, allowedShrink: plan.allowedShrink, deadline: deadline)
            return DecodedImage(image: whole.image, originalSize: originalSize, loader: loader, shrink: whole.shrink)
        }
        let windowed = plan.windows.sorted { $0.key < $1.key }
        let passes = (plan.decodesWhole ? [nil] : []) + windowed.map { Optional($0) }
        let results = Locked<[Int: Result<(image: VipsImage, shrink: Int), any Error>]>([:])
        // Dispatch's parallel loop: this runs synchronously on a decompress lane and libvips
        // blocks, so the passes run on Dispatch's pool and the lane waits for all of them.
        DispatchQueue.concurrentPerform(iterations: passes.count) { pass in
            let result = Result { () throws -> (image: VipsImage, shrink: Int) in
                guard let (_, window) = passes[pass] else {
                    return try decodeWhole(source, header: header, loader: loader, allowedShrink: plan.allowedShrink, deadline: deadline)
                }
                return (try decodeWindow(window, of: source, header: header, loader: loader, deadline: deadline), 1)
            }
            results.withLock { $0[pass] = result }
        }
        // Every pass left its result.
        let decoded = try passes.indices.map { pass in
            guard let result = results.withLock({ $0[pass] }) else {
                throw ItemError(.undecodable, stage: .decompress, reason: "a decoding pass ended without a result")
            }
            return try result.get()
        }
        var windows: [Int: VipsImage] = [:]
        for (pass, entry) in passes.enumerated() {
            if let (index, _) = entry { windows[index] = decoded[pass].image }
        }
        // When every output has a window, nothing fans out from a whole image: the first window stands in.
        let image = decoded[0].image
        return DecodedImage(image: image, originalSize: originalSize, loader: loader, shrink: decoded[0].shrink, windows: windows)
    }

    /// The whole image, decoded in one top-to-bottom pass (the loader streams, and the shrink
    /// happens as rows arrive) to what the outputs allow, rendered upright and in sRGB; and
    /// the factor shrink-on-load reduced it by.
    private func decodeWhole(
        _ source: EncodedSource, header: VipsImage, loader: String, allowedShrink allowed: Double,
        deadline: VipsDeadline
    ) throws -> (image: VipsImage, shrink: Int) {
        let failOn = "fail_on=\(settings.failOn.rawValue)"
        let target = DecodePlan.decodeSize(stored: header.size, allowedShrink: allowed)
        let scaling = DecodePlan.loadScaling(
            loader: loader, stored: header.size, target: target, allowed: allowed, fast: settings.fastShrinkOnLoad)
        let loadOptions = ["access=sequential", failOn] + scaling.options
        let read = fastRead(source, header: header, pass: .whole(target: target))
        defer { read?.release() }
        let image = try read?.image ?? open(source, options: loadOptions.joined(separator: ","), loader: header.loader)
        deadline.watch(image)
        // Exactly the target: a loader that rounded a side one pixel short is stretched by that pixel.
        return (try finished(image.resampled(to: target), deadline: deadline), scaling.shrink)
    }

    /// One output's window (`DecodePlan.windows`), decoded alone in a pass of its own over the
    /// file: the rows stream through a crop to the window before any resize, so libvips holds
    /// rows only as wide as the window. Not WebP (`DecodePlan`). A file stored turned or
    /// mirrored (EXIF orientation) is cut where the window lies as stored, then turned upright.
    private func decodeWindow(
        _ upright: DecodeWindow, of source: EncodedSource, header: VipsImage, loader: String,
        deadline: VipsDeadline
    ) throws -> VipsImage {
        let turned = settings.autorotate && header.orientation != 1
        let window =
            turned
            ? upright.stored(
                in: ImageSize(width: header.orientedSize.width, height: header.orientedSize.height),
                orientation: header.orientation) : upright
        let allowed = min(Double(window.width) / Double(window.size.width), Double(window.height) / Double(window.size.height))
        var loadOptions = ["access=sequential", "fail_on=\(settings.failOn.rawValue)"]
        let shrink = DecodePlan.loadShrink(
            allowed: allowed, loader: loader, fast: settings.fastShrinkOnLoad, stored: ImageSize(width: header.width, height: header.height)
        )
        if shrink > 1 { loadOptions.append("shrink=\(shrink)") }
        let read = fastRead(source, header: header, pass: .window)
        defer { read?.release() }
        let image = try read?.image ?? open(source, options: loadOptions.joined(separator: ","), loader: header.loader)
        deadline.watch(image)
        // Shrink-on-load made the image smaller: the window in its pixels.
        let horizontal = Double(image.width) / Double(header.width)
        let vertical = Double(image.height) / Double(header.height)
        let left = min(image.width - 1, Int((Double(window.left) * horizontal).rounded(.down)))
        let top = min(image.height - 1, Int((Double(window.top) * vertical).rounded(.down)))
        let width = max(1, min(image.width - left, Int((Double(window.width) * horizontal).rounded())))
        let height = max(1, min(image.height - top, Int((Double(window.height) * vertical).rounded())))
        return try finished(
            image.extracted(left: left, top: top, width: width, height: height).resampled(to: window.size),
            deadline: deadline)
    }

    /// Every frame of an animated GIF or WebP, each shrunk to what the largest output needs and
    /// converted to sRGB, stacked top to bottom (one page a frame) and rendered into memory.
    func decodeAnimation(_ source: EncodedSource, header: VipsImage, loader: String, deadline: VipsDeadline) throws -> DecodedImage {
        let frames = header.pageCount
        try refuseOverMaxPixels(
            header.width * header.height * frames, described: "the animation is \(header.width)×\(header.height) × \(frames) frames")
        // libvips leaves a cut-off last frame out without a word, whatever fail_on says.
        if loader.hasPrefix("gifload"), settings.failOn != .none, case .truncated(let whole) = GIFStructure.ending(of: source) {
            throw ItemError(
                .undecodable, stage: .decompress,
                reason:
                    "the GIF is truncated: its bytes end after \(whole) whole frame\(whole == 1 ? "" : "s"), before its trailer "
                    + "(decompress.failOn \(settings.failOn.rawValue); none makes the frames there are)")
        }
        let orientation = settings.autorotate ? header.orientation : 1
        let stored = header.size
        let size = uprightSize(header)
        let upright = DecodePlan.decodeSize(stored: size, allowedShrink: allowedShrink(for: size))
        // Frames turned a quarter are decoded at the size that, turned, serves the outputs.
        let target = orientation >= 5 ? ImageSize(width: upright.height, height: upright.width) : upright
        let strip = try open(source, options: "n=-1,fail_on=\(settings.failOn.rawValue)", loader: header.loader)
        deadline.watch(strip)
        let frameHeight = strip.pageHeight
        let frameCount = strip.height / max(1, frameHeight)
        if target == stored {
            // Frames kept at their size need no runs: one pass down the strip, frames in the order
            // the loader makes them, straight into the memory they are kept in (runs would be
            // copied again when joined, holding every frame twice).
            let decoded = try turnedUpright(deadline.render(Self.toSRGB(strip)), orientation: orientation, deadline: deadline)
            decoded.ownMetadata()
            return DecodedImage(image: decoded, originalSize: size, loader: loader, shrink: 1, frameCount: frameCount)
        }
        // A run of frames at a time, each run read into memory first: the GIF loader decodes a
        // frame from the one before it, so frames asked for out of order would be decoded again
        // and again, and the runs keep what is held at full size to one run's frames.
        let framesPerRun = max(1, Self.animationRunPixels / max(1, strip.width * frameHeight))
        var runs: [VipsImage] = []
        for first in stride(from: 0, to: frameCount, by: framesPerRun) {
            let count = min(framesPerRun, frameCount - first)
            let frames = try strip.extracted(left: 0, top: first * frameHeight, width: strip.width, height: count * frameHeight)
            let stored = try deadline.render(frames.withPageHeight(frameHeight))
            runs.append(try deadline.render(Self.toSRGB(stored.resampledPages(to: target))))
        }
        // One run is in memory already, its pages set; several are stacked into one image (the
        // last may hold fewer frames than the others).
        let stacked = try runs.count == 1 ? runs[0] : deadline.render(VipsImage.stacking(runs).withPageHeight(target.height))
        let decoded = try turnedUpright(stacked, orientation: orientation, deadline: deadline)
        decoded.ownMetadata()
        return DecodedImage(image: decoded, originalSize: size, loader: loader, shrink: 1, frameCount: frameCount)
    }

    /// `frames` (stacked, one page a frame, in memory) each turned upright by `orientation`
    /// (EXIF's, 1 for none), as a still image is: libvips' autorotate would turn the whole stack
    /// as one image, its first frame last.
    private func turnedUpright(_ frames: VipsImage, orientation: Int, deadline: VipsDeadline) throws -> VipsImage {
        guard orientation > 1 else { return frames }
        let turned = try frames.pages().map { try $0.autorotated() }
        let joined = try VipsImage.joiningPages(turned).withPageHeight(turned[0].height)
        return try XMPOrientation.upright(deadline.render(joined))
    }

    /// The most pixels of an animation `decodeAnimation` holds at full size at once (a run of
    /// whole frames, or one frame when it alone is larger): a resample's run, so that each is
    /// resampled whole.
    static let animationRunPixels = VipsImage.resampledRunPixels

    /// A pass's small image turned upright, in sRGB and rendered into memory, owning its metadata.
    private func finished(_ small: VipsImage, deadline: VipsDeadline) throws -> VipsImage {
        var image = small
        if settings.autorotate, image.orientation != 1 {
            // Rotating needs the whole image, not a stream of rows: render the small one first.
            image = try XMPOrientation.upright(deadline.render(image).autorotated())
        }
        image = try Self.toSRGB(image)
        let decoded = try deadline.render(image)
        // While the loader's image is still alive: its metadata may point into its memory.
        decoded.ownMetadata()
        return decoded
    }

    /// Converts to 8-bit sRGB (or 8-bit greyscale for grey images), through the embedded ICC
    /// profile when there is one, with at most one alpha band: bands past it are dropped. A
    /// profile libvips cannot use is ignored rather than failing the image, as browsers do.
    static func toSRGB(_ input: VipsImage) throws -> VipsImage {
        var image = input
        // An embedded sRGB profile needs no conversion (libvips' thumbnail converts no profile at
        // all unless asked to): a pass of Little CMS over every pixel saved. Unless it is padded
        // or mislabelled (`isPlain`): then the pass leaves libvips' own sRGB profile in its place,
        // where the outputs would keep every byte of it.
        // Floating-point pixels, which libvips takes as linear light, its icc_transform turns
        // black: their profile is passed over, as vipsthumbnail passes it over.
        let integral = image.bandFormat == .uchar || image.bandFormat == .ushort
        if integral, image.hasICCProfile, !image.hasPlainSRGBProfile, var converted = try? image.convertedFromEmbeddedProfileToSRGB() {
            let colourBands = input.isGreyscale ? 1 : input.interpretation == .cmyk ? 4 : 3
            if input.hasAlpha, input.bandFormat == .ushort, input.bands > colourBands, converted.bands > 3 {
                // libvips' icc_transform makes 8-bit colour and clips a 16-bit alpha (the band
                // after the colour; a spot channel may follow) to 255, where it should scale it:
                // the input's own alpha, scaled and rounded, takes its place.
                let alpha = try input.extractingBands(colourBands)
                    .applying("linear", ["a": .numbers([1.0 / 257]), "b": .numbers([0.5])]).cast(to: .uchar)
                converted = try converted.extractingBands(0, count: 3).cast(to: .uchar).joiningBands(alpha)
            }
            // A grey profile's image stays grey, as one without a profile does: lcms gives it
            // three equal bands, a colour image three times the size. Its sRGB profile, which
            // fits no grey band, goes with them.
            image =
                input.isGreyscale
                ? try converted.converted(to: .blackAndWhite).removingFields(["icc-profile-data"]) : converted
        } else if !integral, let profile = image.iccProfileBytes, !ICCProfile.isPlain(profile) {
            // Passed over, it would be kept: padded or mislabelled, it goes (sRGB is assumed).
            image = try image.removingFields(["icc-profile-data"])
        }
        switch image.interpretation {
        case .sRGB, .blackAndWhite:
            break
        case .grey16:
            image = try image.converted(to: .blackAndWhite)
        case .cmyk where !image.hasICCProfile:
            // Through libvips' CMYK profile, as sharp converts such an image and as the same
            // pixels tagged with that profile are: libvips' colourspace goes on from XYZ with
            // its own white point and clipping, a few levels away.
            image = try image.convertedToSRGB(assuming: "cmyk")
        default:
            image = try image.converted(to: .sRGB)
        }
        // Bands past colour and one alpha (a TIFF's extra alpha or spot channel) are dropped
        // here, once: libvips' flatten and savers build a vector of colour bands and would
        // otherwise fail deep inside, and no web format holds them.
        let mostBands = image.interpretation == .blackAndWhite ? 2 : 4
        if image.bands > mostBands {
            image = try image.extractingBands(0, count: mostBands)
        }
        if image.bandFormat != .uchar {
            image = try image.cast(to: .uchar)
        }
        return image
    }
}
