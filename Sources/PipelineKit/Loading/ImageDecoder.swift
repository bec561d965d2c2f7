import Foundation
import Vips

/// An input decoded once, upright and in sRGB, ready to fan out to every output.
struct DecodedImage: Sendable {
    let image: VipsImage
    /// The size the file declares, upright: what processors' sizes are relative to.
    let originalSize: ImageSize
    /// The libvips loader that read the file, for example `jpegload_source`.
    let loader: String
    /// The factor shrink-on-load reduced the image by (1 when it did not).
    let shrink: Int
    /// Animation frames stacked in `image`, one page each (1 for a still image).
    var frameCount = 1
    /// Outputs (by index in the run's outputs) that get a window of their own instead of
    /// `image` (`ImageDecoder.DecodePlan`).
    var windows: [Int: VipsImage] = [:]

    /// The image output `index`'s steps start from.
    func image(forOutput index: Int) -> VipsImage {
        windows[index] ?? image
    }
}

/// The decompress stage, which does the heavy part of every output's resize once per input:
/// it reads the header, refuses images over `maxPixels`, decodes streaming (shrinking on load
/// where the format can) straight down to the size the largest output needs, renders that into
/// memory, and only then turns it upright and converts it to sRGB, on the small image. An image
/// too wide or tall for that gives its cover outputs windows of their own (`decodePlan`).
///
/// Measured with `Benchmarks/run.sh`: rendering the full-size decode and resizing it once per
/// output took 2.7× the wall time and 2.2× the memory of this single streaming pass.
struct ImageDecoder: Sendable {
    let settings: DecompressSettings
    let outputs: [OutputDefinition]
    /// What PNGs read whole may hold together (see `wholePNGReads`); tests give their own.
    var wholePNGAllowance = ImageDecoder.wholePNGReads
    /// What the strips of one large TIFF decoded ahead may hold (`VipsImage.readingStripsAhead`).
    var stripReadAhead = StripTIFF.defaultReadAhead
    /// From what one-pass estimate outputs that keep a window decode it alone (`decodePlan`).
    var windowedDecodeMinimum = ImageDecoder.windowedDecodeFrom

    /// libvips keeps one error buffer for the whole process, and its format sniffers clear it:
    /// while other decodes run, a failure's message may vanish, or be another input's. So
    /// decodes run side by side through a gate, and one whose reason comes from that buffer is
    /// decoded again alone, once the others have finished and before new ones start: the
    /// reason read then is this input's. (Failures stop early, so the pause is short; the
    /// pipeline's own reasons, such as too many pixels or the time limit, need no second pass.)
    private static let gate = ExclusiveGate()

    /// Called once a local file is open and checked, before it is decoded: tests change the
    /// file here, as another program might while the run reads it.
    var whileReading: (@Sendable (String) -> Void)? = nil

    /// Decodes `source` for the outputs at `only` (indices in `outputs`; all of them when nil).
    /// A local file is decoded as one version (`pinned`), or fails.
    func decode(_ source: EncodedSource, only: [Int]? = nil) throws(ItemError) -> DecodedImage {
        try pinned(source) { held throws(ItemError) in
            if let whileReading, case .file(let path, _, _, _) = source { whileReading(path) }
            return try decodeGated(held, only: only)
        }
    }

    /// Holds a local file to one version while `body` reads it: opened without blocking (a FIFO,
    /// device or socket put in its place is refused, never waited on), checked against the
    /// version the fetch stage saw, read by every reader through its open descriptor (so a
    /// file renamed over it is not read), and checked again once read, since a file written in
    /// place changes under the descriptor too. A file that changed fails the item, whatever
    /// `body` made of it: the next run makes it from the new version.
    func pinned<Result>(_ source: EncodedSource, _ body: (EncodedSource) throws(ItemError) -> Result) throws(ItemError) -> Result {
        guard case .file(let path, let byteCount, let version, _) = source else { return try body(source) }
        let file: RegularFile
        do throws(RegularFile.Failure) {
            file = try RegularFile(opening: path)
        } catch {
            if error.code == EMFILE || error.code == ENFILE {
                throw ItemError(.unreadable, stage: .decompress, reason: "cannot open \(path): \(OpenFileLimit.reason)")
            }
            let changed = version != nil ? " (it changed since it was fetched)" : ""
            throw ItemError(.unreadable, stage: .decompress, reason: "cannot read \(path): \(error.reason)\(changed)",
                            underlying: error.code.flatMap { POSIXErrorCode(rawValue: $0) }.map { POSIXError($0) })
        }
        let opened = FileVersion(file.status)
        if let version, version != opened {
            throw Self.changedWhileRead(path)
        }
        // The descriptor's own path opens the file it holds, whatever the input's path names now.
        let result = Swift.Result { () throws(ItemError) in
            try body(.file(path: "/proc/self/fd/\(file.descriptor)", byteCount: byteCount, version: opened, name: path))
        }
        var after = stat()
        guard fstat(file.descriptor, &after) == 0, FileVersion(after) == opened else {
            throw Self.changedWhileRead(path)
        }
        return try result.get()
    }

    private static func changedWhileRead(_ path: String) -> ItemError {
        ItemError(.unreadable, stage: .decompress, reason:
            "\(path) changed while it was being read: nothing was made from it, and the next run makes it from the new version")
    }

    private func decodeGated(_ source: EncodedSource, only: [Int]?) throws(ItemError) -> DecodedImage {
        do {
            return try Self.gate.shared { () throws(Failure) in try decodeOnce(source, only: only) }
        } catch where !error.reasonIsFromLibvips {
            throw error.itemError
        } catch {
            do {
                return try Self.gate.exclusive { () throws(Failure) in
                    Vips.clearErrors()
                    return try decodeOnce(source, only: only)
                }
            } catch {
                throw error.itemError
            }
        }
    }

    /// The input's upright size from its header alone (no pixels), or nil when it cannot be
    /// read: then decoding finds and reports why. Through the gate, as a decode, since it may
    /// touch libvips' shared error buffer.
    func uprightSize(of source: EncodedSource) -> ImageSize? {
        try? pinned(source) { source in uprightSize(ofPinned: source) }
    }

    private func uprightSize(ofPinned source: EncodedSource) -> ImageSize? {
        Self.gate.shared { () -> ImageSize? in
            guard Self.preparedForUntrustedInput, Self.isLoadable(source),
                  let header = try? open(source, options: "fail_on=\(settings.failOn.rawValue)") else { return nil }
            let upright = settings.autorotate ? header.orientedSize : (width: header.width, height: header.height)
            return ImageSize(width: upright.width, height: upright.height)
        }
    }

    /// A failed decode, and whether its reason came through libvips' shared error buffer.
    private struct Failure: Error {
        let itemError: ItemError
        var reasonIsFromLibvips = false
    }

    private func decodeOnce(_ source: EncodedSource, only: [Int]?) throws(Failure) -> DecodedImage {
        // The loaders cannot even open a file when no descriptor is left: that is not an
        // unknown format (asked again in case one was freed meanwhile).
        guard Self.preparedForUntrustedInput, Self.isLoadable(source) || (!OpenFileLimit.isReached && Self.isLoadable(source)) else {
            if OpenFileLimit.isReached {
                throw Failure(itemError: ItemError(.unreadable, stage: .decompress, reason: OpenFileLimit.reason))
            }
            throw Failure(itemError: ItemError(.unsupportedFormat, stage: .decompress, reason: ItemError.unknownFormat))
        }
        Vips.clearLastWarning()
        // The clock runs from here: renders under it are stopped when it runs out.
        let deadline = VipsDeadline(seconds: settings.timeout)
        defer { deadline.cancel() }
        do {
            let failOn = "fail_on=\(settings.failOn.rawValue)"
            let header = try open(source, options: failOn)
            let pixels = header.width * header.height
            guard pixels <= settings.maxPixels else {
                throw ItemError(.tooManyPixels, stage: .decompress, reason:
                    "the image is \(header.width)×\(header.height) (\(pixels) pixels), more than decompress.maxPixels (\(settings.maxPixels))")
            }
            let upright = settings.autorotate ? header.orientedSize : (width: header.width, height: header.height)
            let originalSize = ImageSize(width: upright.width, height: upright.height)
            let loader = header.loader ?? "unknown"
            if settings.animation == .keep, header.pageCount > 1, loader.hasPrefix("gifload") || loader.hasPrefix("webpload") {
                return try decodeAnimation(source, header: header, loader: loader, deadline: deadline)
            }

            let plan = decodePlan(for: originalSize, loader: loader, streams: Self.unstreamedDecodeBytes(header) == 0, only: only)
            guard !plan.windows.isEmpty else {
                let whole = try decodeWhole(source, header: header, loader: loader, allowedShrink: plan.allowedShrink, deadline: deadline)
                return DecodedImage(image: whole.image, originalSize: originalSize, loader: loader, shrink: whole.shrink)
            }
            // The passes read the file each on its own: side by side, a lone very wide image
            // keeps both cores busy (each pass is mostly the format's decoding, on one thread).
            let windowed = plan.windows.sorted { $0.key < $1.key }
            let passes = (plan.decodesWhole ? [nil] : []) + windowed.map { Optional($0) }
            let results = Locked<[Int: Result<(image: VipsImage, shrink: Int), any Error>]>([:])
            DispatchQueue.concurrentPerform(iterations: passes.count) { pass in
                let result = Result { () throws -> (image: VipsImage, shrink: Int) in
                    guard let (_, window) = passes[pass] else {
                        return try decodeWhole(source, header: header, loader: loader, allowedShrink: plan.allowedShrink, deadline: deadline)
                    }
                    return (try decodeWindow(window, of: source, header: header, loader: loader, deadline: deadline), 1)
                }
                results.withLock { $0[pass] = result }
            }
            // Every pass left its result; the first failure, in pass order, is the input's.
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
        } catch let error as ItemError {
            throw Failure(itemError: error)
        } catch {
            if deadline.hasExpired {
                throw Failure(itemError: ItemError(.timedOut, stage: .decompress, reason:
                    "decoding took longer than decompress.timeout (\(Units.text(seconds: settings.timeout))) and was stopped"))
            }
            let kind: ItemError.Kind = ItemError.isUnknownFormat(error) ? .unsupportedFormat : .undecodable
            if let own = Self.ownMessage(error, source: source) {
                throw Failure(itemError: ItemError(kind, stage: .decompress, reason: own, underlying: error), reasonIsFromLibvips: true)
            }
            // Some loaders give their reason only as a warning, logged on this thread.
            if let warning = Vips.lastWarning {
                throw Failure(itemError: ItemError(kind, stage: .decompress, reason: warning, underlying: error), reasonIsFromLibvips: true)
            }
            let operation = (error as? VipsError)?.operation ?? "load"
            throw Failure(itemError: ItemError(kind, stage: .decompress, reason: "libvips could not decode it and gave no reason (in \(operation))",
                                               underlying: error),
                          reasonIsFromLibvips: true)
        }
    }

    /// The whole image, decoded in one top-to-bottom pass (the loader streams, and the shrink
    /// happens as rows arrive) to what the outputs allow, rendered upright and in sRGB; and
    /// the factor shrink-on-load reduced it by.
    private func decodeWhole(_ source: EncodedSource, header: VipsImage, loader: String, allowedShrink allowed: Double,
                             deadline: VipsDeadline) throws -> (image: VipsImage, shrink: Int) {
        let failOn = "fail_on=\(settings.failOn.rawValue)"
        let target = Self.decodeSize(stored: header.size, allowedShrink: allowed)
        var loadOptions = ["access=sequential", failOn]
        let shrink: Int
        if loader.hasPrefix("webpload"), target != header.size {
            // libwebp scales with a real resampler while it decodes: ask for the target
            // itself (as vips_thumbnail does); a full-size WebP frame costs 4 bytes a pixel.
            shrink = Int(allowed.rounded(.down))
            loadOptions.append("scale=\(Double(target.width) / Double(header.width))")
        } else {
            shrink = Self.loadShrink(allowed: allowed, loader: loader, fast: settings.fastShrinkOnLoad)
            if shrink > 1 { loadOptions.append("shrink=\(shrink)") }
        }
        let whole = readWholePNG(source, header: header)
        defer { if let whole { wholePNGAllowance.release(whole.bytes) } }
        let image = try whole?.image ?? decodeWebP(source, header: header, size: target) ?? readStripsAhead(source, header: header)
            ?? readPNGRowsAhead(source, header: header) ?? open(source, options: loadOptions.joined(separator: ","))
        deadline.watch(image)
        // Exactly the target: a loader that rounded a side one pixel short is stretched by that pixel.
        return (try finished(image.resampled(to: target), deadline: deadline), shrink)
    }

    /// A pass's small image turned upright, in sRGB and rendered into memory, owning its metadata.
    private func finished(_ small: VipsImage, deadline: VipsDeadline) throws -> VipsImage {
        var image = small
        if settings.autorotate, image.orientation != 1 {
            // Rotating needs the whole image, not a stream of rows: render the small one first.
            image = try deadline.render(image).autorotated()
        }
        image = try Self.toSRGB(image)
        let decoded = try deadline.render(image)
        // While the loader's image is still alive: its metadata may point into its memory.
        decoded.ownMetadata()
        return decoded
    }

    /// One output's window (`DecodePlan.windows`), decoded alone in a pass of its own over the
    /// file: the rows stream through a crop to the window before any resize, so libvips holds
    /// rows only as wide as the window. Not WebP (`decodePlan`). A file stored turned or
    /// mirrored (EXIF orientation) is cut where the window lies as stored, then turned upright.
    private func decodeWindow(_ upright: DecodeWindow, of source: EncodedSource, header: VipsImage, loader: String,
                              deadline: VipsDeadline) throws -> VipsImage {
        let turned = settings.autorotate && header.orientation != 1
        let window = turned ? upright.stored(in: ImageSize(width: header.orientedSize.width, height: header.orientedSize.height),
                                             orientation: header.orientation) : upright
        let allowed = min(Double(window.width) / Double(window.size.width), Double(window.height) / Double(window.size.height))
        var loadOptions = ["access=sequential", "fail_on=\(settings.failOn.rawValue)"]
        let shrink = Self.loadShrink(allowed: allowed, loader: loader, fast: settings.fastShrinkOnLoad)
        if shrink > 1 { loadOptions.append("shrink=\(shrink)") }
        let whole = readWholePNG(source, header: header)
        defer { if let whole { wholePNGAllowance.release(whole.bytes) } }
        let image = try whole?.image ?? readStripsAhead(source, header: header) ?? readPNGRowsAhead(source, header: header)
            ?? open(source, options: loadOptions.joined(separator: ","))
        deadline.watch(image)
        // Shrink-on-load made the image smaller: the window in its pixels.
        let horizontal = Double(image.width) / Double(header.width)
        let vertical = Double(image.height) / Double(header.height)
        let left = min(image.width - 1, Int((Double(window.left) * horizontal).rounded(.down)))
        let top = min(image.height - 1, Int((Double(window.top) * vertical).rounded(.down)))
        let width = max(1, min(image.width - left, Int((Double(window.width) * horizontal).rounded())))
        let height = max(1, min(image.height - top, Int((Double(window.height) * vertical).rounded())))
        return try finished(image.extracted(left: left, top: top, width: width, height: height).resampled(to: window.size),
                            deadline: deadline)
    }

    /// Every frame of an animated GIF or WebP, each shrunk to what the largest output needs and
    /// converted to sRGB, stacked top to bottom (one page a frame) and rendered into memory.
    private func decodeAnimation(_ source: EncodedSource, header: VipsImage, loader: String, deadline: VipsDeadline) throws -> DecodedImage {
        let frames = header.pageCount
        let pixels = header.width * header.height * frames
        guard pixels <= settings.maxPixels else {
            throw ItemError(.tooManyPixels, stage: .decompress, reason:
                "the animation is \(header.width)×\(header.height) × \(frames) frames (\(pixels) pixels), more than decompress.maxPixels (\(settings.maxPixels))")
        }
        let size = header.size
        let target = Self.decodeSize(stored: size, allowedShrink: allowedShrink(for: size))
        let strip = try open(source, options: "n=-1,fail_on=\(settings.failOn.rawValue)")
        deadline.watch(strip)
        let pages = try strip.pages().map { page throws -> VipsImage in
            try Self.toSRGB(page.resampled(to: target))
        }
        let decoded = try deadline.render(try VipsImage.joiningPages(pages))
        decoded.ownMetadata()
        return DecodedImage(image: decoded, originalSize: size, loader: loader, shrink: 1, frameCount: pages.count)
    }

    /// What decoding an input will hold, from its header alone: what admission by memory
    /// (`MemoryAdmission`) weighs before the decode starts.
    struct MemoryNeeds: Equatable {
        /// Bytes that decoding it and making every output from it may hold at once.
        let estimate: Int64
        /// Of those, what the loader holds at full size (`unstreamedDecodeBytes(_:)`). A PNG
        /// read whole is not counted: it is read whole only when `wholePNGReads` has room.
        let unstreamed: Int64
    }

    /// The input's `MemoryNeeds`; nil when the header cannot be read (decoding then fails and
    /// says why).
    func memoryNeeds(of source: EncodedSource, only: [Int]? = nil) -> MemoryNeeds? {
        try? pinned(source) { held in memoryNeeds(ofPinned: held, only: only) }
    }

    private func memoryNeeds(ofPinned source: EncodedSource, only: [Int]?) -> MemoryNeeds? {
        // Through the gate: a failed open writes libvips' shared error buffer, which a decode
        // running alone to read its own reason must not find written.
        let header = Self.gate.shared { try? open(source, options: "") }
        guard let header else { return nil }
        let upright = settings.autorotate ? header.orientedSize : (width: header.width, height: header.height)
        let size = ImageSize(width: upright.width, height: upright.height)
        let loader = header.loader ?? ""
        let animated = settings.animation == .keep && header.pageCount > 1 && (loader.hasPrefix("gifload") || loader.hasPrefix("webpload"))
        let unstreamed = Self.unstreamedDecodeBytes(header)
        var bytes: Int64
        var passes = 1
        let decodeSize: ImageSize
        if animated {
            decodeSize = Self.decodeSize(stored: size, allowedShrink: allowedShrink(for: size))
            bytes = Self.estimatedBytes(decodeSize: decodeSize, outputs: outputs) * Int64(header.pageCount)
        } else {
            let plan = decodePlan(for: size, loader: loader, streams: unstreamed == 0, only: only)
            decodeSize = plan.decodeSize
            bytes = plan.estimate
            passes = plan.passes
        }
        let made = only.map { indices in indices.map { outputs[$0] } } ?? outputs
        let encoding = Self.encodingBytes(decodeSize: decodeSize, alpha: header.hasAlpha, outputs: made)
        if case .memory(let fetched) = source { bytes += Int64(fetched.count) }
        let readers = Int64(Self.gate.shared { stripReadAheadPlan(source, header: header) }?.heldBytes ?? 0) + pngRowsAheadBytes(source, header: header)
        return MemoryNeeds(estimate: Self.inputEstimate(bytes, passes: passes, unstreamed: unstreamed, readers: readers, encoding: encoding),
                           unstreamed: unstreamed)
    }

    /// An input's estimate (admission by memory and `explain` both): the decode plan's images
    /// and rows (`planBytes`), what a decode that cannot stream holds, and the read-ahead
    /// readers' buffers (`readers`), one set for each pass of a windowed decode.
    static func inputEstimate(_ planBytes: Int64, passes: Int, unstreamed: Int64, readers: Int64, encoding: Int64) -> Int64 {
        planBytes + unstreamed + Int64(passes) * readers + encoding
    }

    /// What the most demanding of `outputs`' encoders holds while it writes its image, made from
    /// a decode of `decodeSize` (`EncoderSettings.workingBytes(pixels:alpha:)`; `alpha`: the
    /// input has an alpha band, taken to reach the outputs): an input's outputs are encoded one
    /// after another on a lane, and the inputs admitted together cover the lanes.
    static func encodingBytes(decodeSize: ImageSize, alpha: Bool, outputs: [OutputDefinition]) -> Int64 {
        outputs.map { output in
            output.encoder.workingBytes(pixels: output.steps.reduce(decodeSize) { $1.outputSize(for: $0) }.pixelCount, alpha: alpha)
        }.max() ?? 0
    }

    /// What the loader holds at full size before any row comes out, for a decode that cannot
    /// stream: an interlaced PNG is read whole (libvips renders its passes into one image), and
    /// a progressive JPEG keeps every DCT coefficient (2 bytes each, chroma as subsampled) even
    /// when it shrinks on load. 0 for decodes that stream row by row.
    static func unstreamedDecodeBytes(_ header: VipsImage) -> Int64 {
        guard header.intField("interlaced") == 1 else { return 0 }
        let pixels = Int64(header.width) * Int64(header.height)
        if header.loader?.hasPrefix("jpegload") == true {
            let chroma: Double = switch header.stringField("jpeg-chroma-subsample") {
            case "4:2:0": 0.5
            case "4:2:2", "4:4:0": 1
            default: header.bands > 1 ? Double(header.bands - 1) : 0
            }
            return Int64(Double(pixels) * (1 + chroma) * 2)
        }
        // Measured: a 24 MP interlaced 16-bit RGB PNG peaked 123 MB above the same file not
        // interlaced (estimated 144 MB), a progressive 4:2:0 JPEG 68 MB above (estimated 72 MB).
        return pixels * Int64(header.bands) * Int64(header.bandFormat == .uchar ? 1 : 2)
    }

    /// What libvips' resize keeps in rows of full width while a very wide image streams down to
    /// `decodeSize`: on a sequential input its `shrinkv` and `reducev` each add a line cache of
    /// their own, and the sink holds strips, all as wide as the image the reduce starts from
    /// (after the rows' box-shrink of `VipsImage.resampled(to:)`); a streamed decode cannot hand
    /// libvips anything narrower, but a window cut from the rows first is narrower
    /// (`decodePlan`). 0 below 32 MB (within the estimate's margin: the rows of a
    /// photograph) and for WebP, which libwebp decodes straight at its size.
    ///
    /// Measured with the benchmark's standard job on PNGs 2000 rows tall and 100000, 300000 and
    /// 500000 pixels wide, whose "small" cover output decodes them at 16000 to 80000 × 320: the
    /// peak grew by about 1050 such rows (163, 368, 574 MiB); counted here at 4 bytes a pixel,
    /// as the rest of the estimate is, and never more rows than the image has (a 40000×500 PNG
    /// streamed to 25600×320 peaked 95 MB above the process's start, estimated 115 MB).
    static func wideRowsBytes(size: ImageSize, decodeSize: ImageSize, loader: String) -> Int64 {
        guard !loader.hasPrefix("webpload"), decodeSize.width > 0 else { return 0 }
        let rowShrink = max(1, size.width / (decodeSize.width * 2))
        let bytes = Int64(size.width / rowShrink) * 4 * min(wideRowsHeld, Int64(size.height))
        return bytes >= 32_000_000 ? bytes : 0
    }

    /// Rows of the reduce's starting width that libvips 8.14's resize keeps (`wideRowsBytes`).
    static let wideRowsHeld: Int64 = 1050

    /// How an input of `size` is decoded: the image the outputs fan out from, and the outputs
    /// that decode a window of their own instead (`ImageProcessing.decodeWindow(for:)`).
    struct DecodePlan: Equatable {
        /// The size of the image the outputs without a window fan out from (upright).
        var decodeSize: ImageSize
        /// The shrink those outputs allow (`allowedShrink(of:for:)`).
        var allowedShrink: Double
        /// Outputs, by index, that decode their window alone, in a pass over the file each.
        var windows: [Int: DecodeWindow] = [:]
        /// Whether any output fans out from the image at `decodeSize` (false when every output
        /// has a window: that image is then not decoded).
        var decodesWhole = true
        /// Rows of full width libvips' resize keeps in the passes together (`wideRowsBytes`).
        var wideRowsBytes: Int64
        /// The decoded images and each output's image at 4 bytes a pixel (`estimatedBytes`),
        /// and `wideRowsBytes`.
        var estimate: Int64

        /// Passes over the file, which run side by side: the whole image's, and one a window.
        var passes: Int { (decodesWhole ? 1 : 0) + windows.count }
    }

    /// The `DecodePlan` for an input of `size`: decoded once for every output, unless that
    /// holds `windowedDecodeMinimum` or more and the outputs that keep a window (a cover crop)
    /// decoding it alone would hold at most half as much. A pass over the file per window
    /// costs time, so only images whose decode-once rows would be very wide take it: a
    /// 100000×2000 panorama whose 320×320 cover decodes it at 16000×320 (163 MiB measured),
    /// not a photograph.
    ///
    /// `only` names the outputs (by index) to be made when not all are (the others are up to
    /// date): the plan is the whole run's, so each output is made from what a full run makes
    /// it from, but windows of outputs not made are not decoded, nor the whole image when no
    /// output made needs it. `streams` false (an interlaced PNG, a progressive JPEG: every pass
    /// would hold the full image) allows no windows.
    func decodePlan(for size: ImageSize, loader: String, streams: Bool = true, only: [Int]? = nil) -> DecodePlan {
        var plan = wholeRunPlan(for: size, loader: loader, streams: streams)
        guard let only, !only.isEmpty, !plan.windows.isEmpty else { return plan }
        let made = Set(only)
        plan.windows = plan.windows.filter { made.contains($0.key) }
        plan.decodesWhole = made.contains { plan.windows[$0] == nil }
        return plan
    }

    /// The plan for every output.
    private func wholeRunPlan(for size: ImageSize, loader: String, streams: Bool) -> DecodePlan {
        let allowed = allowedShrink(for: size)
        let decodeSize = Self.decodeSize(stored: size, allowedShrink: allowed)
        let wide = Self.wideRowsBytes(size: size, decodeSize: decodeSize, loader: loader)
        let once = DecodePlan(decodeSize: decodeSize, allowedShrink: allowed, wideRowsBytes: wide,
                              estimate: Self.estimatedBytes(decodeSize: decodeSize, outputs: outputs) + wide)
        // libwebp decodes the whole frame at its scale; it has no streamed rows to crop.
        guard streams, !loader.hasPrefix("webpload"), once.estimate >= windowedDecodeMinimum else { return once }
        var windows: [Int: DecodeWindow] = [:]
        for (index, output) in outputs.enumerated() {
            if let window = output.steps.first?.decodeWindow(for: size) { windows[index] = window }
        }
        guard !windows.isEmpty else { return once }
        let rest = outputs.indices.filter { windows[$0] == nil }.map { outputs[$0] }
        let restAllowed = Self.allowedShrink(of: rest, for: size)
        let restSize = Self.decodeSize(stored: size, allowedShrink: restAllowed)
        // The passes run side by side, and every image they make is held for the fan-out.
        var held: Int64 = 0
        var rows: Int64 = 0
        if !rest.isEmpty {
            held += Self.estimatedBytes(decodeSize: restSize, outputs: rest)
            rows += Self.wideRowsBytes(size: size, decodeSize: restSize, loader: loader)
        }
        for (index, window) in windows {
            held += Self.estimatedBytes(decodeSize: window.size, outputs: [outputs[index]])
            rows += Self.wideRowsBytes(size: ImageSize(width: window.width, height: window.height), decodeSize: window.size, loader: loader)
        }
        let split = DecodePlan(decodeSize: restSize, allowedShrink: restAllowed, windows: windows, decodesWhole: !rest.isEmpty,
                               wideRowsBytes: rows, estimate: held + rows)
        return split.estimate * 2 <= once.estimate ? split : once
    }

    /// The one-pass estimate from which outputs that keep a window may decode it alone
    /// (`decodePlan`). Measured with the standard job: a 200000×5000 PNG decoded once (estimated
    /// 137 MB) peaked at 148 MiB; 100000×2000 (estimated 160 MB) at 163 MiB.
    static let windowedDecodeFrom: Int64 = 150_000_000

    /// `windowedDecodeFrom`, or under a memory budget half of it when that is less: a window
    /// plan that fits the budget is better than a one-pass plan admission refuses.
    static func windowedDecodeMinimum(under budget: MemoryBudget?) -> Int64 {
        budget.map { min(windowedDecodeFrom, $0.bytes / 2) } ?? windowedDecodeFrom
    }

    /// The estimate for one decoded frame of `decodeSize`: the decoded image and each output's
    /// image, at 4 bytes a pixel (8-bit RGBA, the most the decoder keeps). Shared with `explain`.
    static func estimatedBytes(decodeSize: ImageSize, outputs: [OutputDefinition]) -> Int64 {
        let outputPixels = outputs.reduce(0) { total, output in
            total + output.steps.reduce(decodeSize) { $1.outputSize(for: $0) }.pixelCount
        }
        return Int64(decodeSize.pixelCount + outputPixels) * 4
    }

    /// The lines of a libvips failure that belong to this input, with its path left out (the
    /// report names the input already); nil when nothing of the message is left.
    static func ownMessage(_ error: any Error, source: EncodedSource) -> String? {
        guard let vipsError = error as? VipsError else { return String(describing: error) }
        // libvips reports a descriptor it could not get as a bad one, a write error or an unknown format.
        if OpenFileLimit.isReached || OpenFileLimit.isReported(in: vipsError.message) { return OpenFileLimit.reason }
        // The file by the path its reader opened (a pinned file's descriptor) and by its own.
        var paths: [String] = []
        if case .file(let file, _, _, let name) = source { paths = [file] + (name.map { [$0] } ?? []) }
        var lines: [String] = []
        for line in vipsError.message.components(separatedBy: "; ") where !line.isEmpty {
            let namesAFile = line.hasPrefix("/") || line.contains("\"/")
            if namesAFile, !paths.contains(where: { line.contains($0) }) { continue }
            var own = line
            for path in paths {
                own = own.replacingOccurrences(of: "\"\(path)\"", with: "the file")
                    .replacingOccurrences(of: "\(path): ", with: "")
                    .replacingOccurrences(of: path, with: "the file")
            }
            if !lines.contains(own) { lines.append(own) }
        }
        guard !lines.isEmpty else { return nil }
        return ItemError.reason(for: VipsError(operation: vipsError.operation, message: lines.joined(separator: "; ")))
    }

    /// Loaders libvips marks untrusted are blocked before the first decode: a pipeline reads
    /// files from anywhere, and those loaders were not made for hostile ones. Evaluated once.
    private static let preparedForUntrustedInput: Bool = (try? Vips.prepareForUntrustedInput()) != nil

    /// The size to decode to: the stored size divided by the shrink every output allows, so the
    /// output that needs the most pixels gets exactly what it needs (and resizes by 1, a no-op).
    static func decodeSize(stored: ImageSize, allowedShrink: Double) -> ImageSize {
        guard allowedShrink > 1 else { return stored }
        return ImageSize(
            width: max(1, Int((Double(stored.width) / allowedShrink).rounded())),
            height: max(1, Int((Double(stored.height) / allowedShrink).rounded()))
        )
    }

    /// How much the decoder may shrink: the least any output's first step allows. A plugin's
    /// answer that is not a finite factor of at least 1 counts as 1 (no shrink).
    ///
    /// An output's `widths` are outputs of their own here, each starting with its resize, so the
    /// widest width the image needs decides. Those the image is too narrow for are not made, but
    /// counting them changes nothing: they allow no shrink, and neither does the image's own
    /// width, which then stands in for them.
    func allowedShrink(for size: ImageSize) -> Double {
        Self.allowedShrink(of: outputs, for: size)
    }

    /// `allowedShrink(for:)` over `outputs` alone.
    static func allowedShrink(of outputs: [OutputDefinition], for size: ImageSize) -> Double {
        let allowed = outputs.map { $0.steps.first?.allowedInputShrink(for: size) ?? 1 }.min() ?? 1
        return allowed.isFinite && allowed >= 1 ? allowed : 1
    }

    /// The JPEG shrink-on-load factor (1, 2, 4 or 8). libjpeg shrinks with a reduced-size
    /// IDCT while decoding, which saves most of the decoding work. `fast` takes the whole factor
    /// the outputs allow, as sharp does; otherwise leave a factor of two for the resampling that
    /// follows, as `vips_thumbnail` does, for the finest detail.
    ///
    /// Measured with `Benchmarks/run.sh` (see Benchmarks/RESULTS.md): the fast choice is what makes the
    /// standard job faster than the vips_thumbnail-based reference.
    static func loadShrink(allowed: Double, loader: String, fast: Bool) -> Int {
        guard loader.hasPrefix("jpegload") else { return 1 }
        let margin = fast ? 1.0 : 2.0
        for factor in [8, 4, 2] where allowed >= Double(factor) * margin { return factor }
        return 1
    }

    /// Converts to 8-bit sRGB (or 8-bit greyscale for grey images), through the embedded ICC
    /// profile when there is one. A profile libvips cannot use is ignored rather than failing
    /// the image, as browsers do.
    static func toSRGB(_ input: VipsImage) throws -> VipsImage {
        var image = input
        // An embedded sRGB profile needs no conversion (libvips' thumbnail converts no profile at
        // all unless asked to): a pass of Little CMS over every pixel saved.
        if image.hasICCProfile, !image.hasSRGBProfile, let converted = try? image.convertedFromEmbeddedProfileToSRGB() {
            image = converted
        }
        switch image.interpretation {
        case .sRGB, .blackAndWhite:
            break
        case .grey16:
            image = try image.converted(to: .blackAndWhite)
        default:
            image = try image.converted(to: .sRGB)
        }
        if image.bandFormat != .uchar {
            image = try image.cast(to: .uchar)
        }
        return image
    }

    /// PNGs read whole (`VipsImage.decodeWholePNG`) hold at most this much together, across the
    /// process: one that would go over streams row by row instead (`readPNGRowsAhead`, or
    /// libvips' loader), a little slower but in little memory, so the fast path never makes a
    /// run wait or grow with its width. A 5640×3172 RGB photograph saved without filters holds
    /// 102 MB while it is read whole (its rows and its file), a 4096×4096 one about 55 MB.
    static let wholePNGReads = MemoryAdmission(capacity: 128_000_000)

    /// A PNG read whole with libdeflate, when it is one that reader takes and the allowance
    /// (`wholePNGReads`) has room for it now; nil leaves it to the row readers, which then read
    /// it row by row and report any fault in it. The caller releases `bytes` (the rows; the
    /// file's part is given back here, its copy freed once inflated) once the image is gone.
    ///
    /// Measured with `Benchmarks/run.sh` on the PNG corpus (see Benchmarks/RESULTS.md): zlib's inflate was
    /// 28% of the run's time, and libdeflate inflates the same data two to four times as fast;
    /// the run went from 1.05× the pyvips reference's wall time to 0.81×.
    private func readWholePNG(_ source: EncodedSource, header: VipsImage) -> (image: VipsImage, bytes: Int64)? {
        let needed = Self.wholePNGBytes(header, fileBytes: source.byteCount)
        guard needed > 0, wholePNGAllowance.admitNow(needed) else { return nil }
        let image = switch source {
        case .file(let path, _, _, _): VipsImage.decodeWholePNG(file: path, header: header)
        case .memory(let bytes): VipsImage.decodeWholePNG(bytes: bytes, header: header)
        }
        guard let image else {
            wholePNGAllowance.release(needed)
            return nil
        }
        // The file's copy is gone once its rows are inflated: only the rows stay held.
        let file = Int64(source.byteCount)
        wholePNGAllowance.release(file)
        return (image, needed - file)
    }

    /// A still WebP decoded straight by libwebp at `size` (`VipsImage.decodeWebP`), rather than
    /// through libvips' loader; nil leaves it to that loader (animated, or a fault libwebp found).
    ///
    /// libvips' loader spends more CPU time on a large still WebP than libwebp called straight
    /// (Benchmarks/RESULTS.md has the figures).
    private func decodeWebP(_ source: EncodedSource, header: VipsImage, size: ImageSize) -> VipsImage? {
        switch source {
        case .file(let path, _, _, _): VipsImage.decodeWebP(file: path, header: header, width: size.width, height: size.height)
        case .memory(let bytes): VipsImage.decodeWebP(bytes: bytes, header: header, width: size.width, height: size.height)
        }
    }

    /// A large stripped TIFF whose strips worker threads decode ahead of the resize
    /// (`VipsImage.readingStripsAhead`), when it is of a layout that reader takes and decoding
    /// is strict as libvips' default or stricter short of warnings (libtiff's warnings are not
    /// this reader's to judge); nil leaves it to libvips' loader. Fetched bytes are copied for
    /// the reader (the TIFF's file size again, while it is read).
    ///
    /// Measured with `Benchmarks/run.sh` on a 1-gigapixel LZW TIFF (see Benchmarks/RESULTS.md): libtiff's
    /// LZW decoder was two thirds of the run's time, on one core of two.
    private func readStripsAhead(_ source: EncodedSource, header: VipsImage) -> VipsImage? {
        guard Self.readsAhead(failOn: settings.failOn) else { return nil }
        return switch source {
        case .file(let path, _, _, let name): VipsImage.readingStripsAhead(file: path, header: header, readAhead: stripReadAhead, name: name)
        case .memory(let bytes): VipsImage.readingStripsAhead(bytes: bytes, name: Self.fetchedName, header: header, readAhead: stripReadAhead)
        }
    }

    /// A large PNG not read whole (the allowance for that was full, or it is larger than the
    /// allowance), whose rows a worker thread decodes ahead of the resize, inflated by ISA-L
    /// (`VipsImage.readingPNGRowsAhead`), when it is of a layout that reader takes and decoding
    /// is strict as libvips' default or stricter short of warnings; nil leaves it to libvips'
    /// loader. Fetched bytes are read where they are (the passes of a windowed decode share them).
    ///
    /// Measured with `Benchmarks/run.sh` (see Benchmarks/RESULTS.md): on a 200000×5000 PNG libvips' loader
    /// kept about 518 full-width rows, 310 MB; on the PNG corpus, where the largest files do
    /// not fit the whole-PNG allowance together, zlib's inflate was 10% of the run's time.
    private func readPNGRowsAhead(_ source: EncodedSource, header: VipsImage) -> VipsImage? {
        guard Self.readsAhead(failOn: settings.failOn) else { return nil }
        return switch source {
        case .file(let path, _, _, let name): VipsImage.readingPNGRowsAhead(file: path, header: header, readAhead: stripReadAhead, name: name)
        case .memory(let bytes): VipsImage.readingPNGRowsAhead(bytes: bytes, name: Self.fetchedName, header: header, readAhead: stripReadAhead)
        }
    }

    /// What reading `source` with its rows decoded ahead (a large PNG that is not read whole)
    /// would hold besides the decode: its groups of rows (fetched bytes are not copied); 0
    /// when it is not a PNG that reader takes. Counted whether or not the PNG is then read
    /// whole instead (that has an allowance of its own).
    func pngRowsAheadBytes(_ source: EncodedSource, header: VipsImage) -> Int64 {
        guard Self.readsAhead(failOn: settings.failOn) else { return 0 }
        switch source {
        case .file(let path, _, _, _):
            return Int64(VipsImage.pngRowsAheadBytes(file: path, header: header, readAhead: stripReadAhead) ?? 0)
        case .memory(let bytes):
            return VipsImage.pngRowsAheadBytes(bytes: bytes, header: header, readAhead: stripReadAhead).map(Int64.init) ?? 0
        }
    }

    /// How `source` would be read with strips decoded ahead, its held bytes counting what the
    /// reader holds besides the decode (the rows in flight, the stored strip; fetched bytes
    /// are read where they are); nil when libvips' loader reads it. Part of the estimate admission by
    /// memory weighs, and `explain` shows it.
    func stripReadAheadPlan(_ source: EncodedSource, header: VipsImage) -> StripTIFF.Plan? {
        guard Self.readsAhead(failOn: settings.failOn) else { return nil }
        switch source {
        case .file(let path, _, _, _):
            return VipsImage.stripReadAhead(file: path, header: header, readAhead: stripReadAhead)
        case .memory(let bytes):
            return VipsImage.stripReadAhead(bytes: bytes, header: header, readAhead: stripReadAhead)
        }
    }

    /// What fetched bytes are called in the read-ahead reader's errors.
    static let fetchedName = "the fetched file"

    /// Whether large TIFFs and PNGs may be read with rows decoded ahead under this strictness.
    static func readsAhead(failOn: DecompressSettings.FailOn) -> Bool {
        failOn == .truncated || failOn == .error
    }

    /// What PNGs read whole may hold together in a run under `budget` (or none): under a
    /// budget, an eighth of it at most, as admission by memory does not count them.
    static func wholePNGCapacity(under budget: MemoryBudget?) -> Int64 {
        budget.map { min(wholePNGReads.capacity, $0.bytes / 8) } ?? wholePNGReads.capacity
    }

    /// What one large TIFF's strips decoded ahead may hold in a run under `budget` (or none):
    /// under a budget, a sixteenth of it at most.
    static func stripReadAhead(under budget: MemoryBudget?) -> Int {
        budget.map { Int(min(Int64(StripTIFF.defaultReadAhead), $0.bytes / 16)) } ?? StripTIFF.defaultReadAhead
    }

    /// What reading the PNG `header` describes whole would hold (its rows inflated, and its
    /// file), or 0 when it always streams: a kind the reader does not take, or larger than the
    /// whole allowance.
    static func wholePNGBytes(_ header: VipsImage, fileBytes: Int) -> Int64 {
        guard let bytes = VipsImage.wholePNGBytes(header: header, fileBytes: fileBytes).map(Int64.init),
              bytes <= wholePNGReads.capacity else { return 0 }
        return bytes
    }

    /// As `wholePNGBytes(_:fileBytes:)` for a local file, whose own header is read too (for
    /// `explain`, which should not count a PNG the reader would decline on opening it).
    static func wholePNGBytes(file path: String, header: VipsImage, fileBytes: Int) -> Int64 {
        guard let bytes = VipsImage.wholePNGBytes(file: path, header: header, fileBytes: fileBytes).map(Int64.init),
              bytes <= wholePNGReads.capacity else { return 0 }
        return bytes
    }

    /// Opens `source` with libvips; fetched bytes are read where they are (no copy per image).
    private func open(_ source: EncodedSource, options: String) throws -> VipsImage {
        switch source {
        case .file(let path, _, _, _): try VipsImage.open(file: path, options: options)
        case .memory(let bytes): try VipsImage.open(bytes: bytes, options: options)
        }
    }

    /// Asks libvips whether a loader that is not blocked knows the format. Decided from return
    /// values, so the answer cannot be garbled by another thread's use of libvips' shared
    /// error buffer.
    private static func isLoadable(_ source: EncodedSource) -> Bool {
        switch source {
        case .file(let path, _, _, _): VipsImage.permittedLoader(file: path) != nil
        case .memory(let bytes): VipsImage.permittedLoader(bytes: bytes) != nil
        }
    }
}

extension DecodeWindow {
    /// This window of an image `upright` in size, where it lies in the pixels as stored under
    /// EXIF `orientation` (2 to 8), its size turned as they are. Its own inverse only for the
    /// orientations that are their own inverse: 6 and 8 undo each other.
    func stored(in upright: ImageSize, orientation: Int) -> DecodeWindow {
        let (width, height) = (upright.width, upright.height)
        // Where the upright pixel (x, y) is stored.
        func stored(_ x: Int, _ y: Int) -> (x: Int, y: Int) {
            switch orientation {
            case 2: (width - 1 - x, y)
            case 3: (width - 1 - x, height - 1 - y)
            case 4: (x, height - 1 - y)
            case 5: (y, x)
            case 6: (y, width - 1 - x)
            case 7: (height - 1 - y, width - 1 - x)
            case 8: (height - 1 - y, x)
            default: (x, y)
            }
        }
        let first = stored(left, top)
        let last = stored(left + self.width - 1, top + self.height - 1)
        let swaps = orientation >= 5
        return DecodeWindow(left: min(first.x, last.x), top: min(first.y, last.y),
                            width: abs(last.x - first.x) + 1, height: abs(last.y - first.y) + 1,
                            size: swaps ? ImageSize(width: size.height, height: size.width) : size)
    }
}
