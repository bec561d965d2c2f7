import Foundation
import Vips

/// The decompress stage, which does the heavy part of every output's resize once per input:
/// it reads the header, refuses images over `maxPixels`, plans the decode (`DecodePlan`), and
/// decodes streaming (shrinking on load where the format can) straight down to the size the
/// largest output needs, by the first fast reader that takes the file (`FastReader`) or else
/// libvips' loader; it renders that into memory, and only then turns it upright and converts it
/// to sRGB, on the small image (`ImageDecoder+Passes`). An image too wide or tall for that gives
/// its cover outputs windows of their own. A failure's reason comes from libvips' error text
/// (`LibvipsErrorText`); what a decode will hold, from its header (`DecodeMemoryEstimate`).
///
/// One streaming pass, rather than rendering the full-size decode and resizing it once per
/// output, is what keeps a run's time and memory low (Benchmarks/RESULTS.md).
struct ImageDecoder: Sendable {
    let settings: DecompressSettings
    let outputs: [OutputDefinition]
    /// What PNGs read whole may hold together (`MemoryAccountant.wholePNGReads`); a decoder made
    /// outside a run has an allowance of its own, and tests give theirs.
    var wholePNGAllowance = MemoryAdmission(capacity: MemoryAccountant.wholePNGCapacity(under: nil))
    /// The run's decodes that hold a full-size image (`MemoryAccountant.unstreamedDecodes`), which
    /// PNGs read whole take room in too; nil outside a run.
    var fullSizeDecodes: MemoryAdmission? = nil
    /// What the rows of one large TIFF or PNG decoded ahead may hold (`MemoryAccountant.readAhead`).
    var readAhead = MemoryAccountant.readAhead(under: nil)
    /// From what one-pass estimate outputs that keep a window decode it alone (`DecodePlan`).
    var windowedDecodeMinimum = MemoryAccountant.windowedDecodeMinimum(under: nil)
    /// The encode stage's lanes, on which an input's outputs are encoded side by side: the
    /// estimate counts the encoders of that many of them, the most demanding.
    var encodeLanes = 1

    /// Called once a local file is open and checked, before it is decoded: tests change the
    /// file here, as another program might while the run reads it.
    var whileReading: (@Sendable (String) -> Void)? = nil
    /// The outputs, by index, made for the input being decoded (an output's `inputs` may leave
    /// it out), nil for all (`applying(to:)`).
    var applicable: Set<Int>? = nil

    /// Decodes `source` for the outputs at `only` (indices in `outputs`; all of them when nil),
    /// within the input's `item` deadline when it has one (`limits.itemTimeout`). A local file
    /// is decoded as one version (`pinned`), or fails.
    func decode(_ source: EncodedSource, only: [Int]? = nil, within item: ItemDeadline? = nil) throws(ItemError) -> DecodedImage {
        try pinned(source) { held throws(ItemError) in
            if let whileReading, case .file(let path, _, _, _) = source { whileReading(path) }
            return try decodeGated(held, only: only, within: item)
        }
    }

    private func decodeGated(_ source: EncodedSource, only: [Int]?, within item: ItemDeadline?) throws(ItemError) -> DecodedImage {
        try gated { () throws(Failure) in try decodeOnce(source, only: only, within: item) }
    }

    /// Runs `read` side by side with other reads through `LibvipsErrorText.gate`; again alone when
    /// its reason came from libvips' shared error buffer, so that the reason is this input's.
    /// (Failures stop early, so the pause is short; the pipeline's own reasons, such as too many
    /// pixels or the time limit, need no second pass.)
    func gated<Result>(_ read: () throws(Failure) -> Result) throws(ItemError) -> Result {
        do {
            return try LibvipsErrorText.gate.shared { () throws(Failure) in try read() }
        } catch  where !error.reasonIsFromLibvips {
            throw error.itemError
        } catch {
            let alone: Result?
            do {
                alone = try LibvipsErrorText.gate.exclusive(waitingUntil: Date(timeIntervalSinceNow: Self.exclusiveWait)) {
                    () throws(Failure) in
                    Vips.clearErrors()
                    return try read()
                }
            } catch let again {
                throw again.itemError
            }
            // Reads that did not end in time keep the gate: the reason read beside them stands.
            guard let alone else { throw error.itemError }
            return alone
        }
    }

    /// How long a failed read waits for the reads beside it to end before it is read again
    /// alone for its reason.
    static let exclusiveWait: TimeInterval = 10

    /// The input's upright size from its header alone (no pixels), or nil when it cannot be
    /// read: then decoding finds and reports why.
    func uprightSize(of source: EncodedSource) -> ImageSize? {
        look(at: source, estimatingFor: nil)?.size
    }

    /// A failed read of a header or of pixels, and whether its reason came through libvips'
    /// shared error buffer (then it is read again alone: `gated`).
    struct Failure: Error {
        let itemError: ItemError
        var reasonIsFromLibvips = false
    }

    private func decodeOnce(_ source: EncodedSource, only: [Int]?, within item: ItemDeadline?) throws(Failure) -> DecodedImage {
        if let reason = unreadableReason(source) { throw Failure(itemError: reason) }
        Vips.clearLastWarning()
        // The clock runs from here: renders under it are stopped when it runs out, or when the
        // input's own time does.
        let deadline = VipsDeadline(seconds: settings.timeout, within: item?.vips)
        defer { deadline.cancel() }
        do {
            let header = try openCheckedHeader(source)
            let originalSize = uprightSize(header)
            let loader = header.loader ?? "unknown"
            try checkFrames(header, loader: loader, source: source)
            if loader == AVIFSequenceReader.loader {
                // libavif's frames, not a libvips loader's passes.
                return try decodeAVIFSequence(
                    source, header: header, keepsFrames: keepsAnimation(header, loader: loader, only: only), deadline: deadline)
            }
            if keepsAnimation(header, loader: loader, only: only) {
                return try decodeAnimation(source, header: header, loader: loader, deadline: deadline)
            }
            let plan = decodePlan(for: originalSize, loader: loader, streams: DecodeMemoryEstimate.streams(header), only: only)
            return try decodePasses(plan, of: source, header: header, loader: loader, originalSize: originalSize, deadline: deadline)
        } catch let error as ItemError {
            throw Failure(itemError: error)
        } catch {
            if deadline.hasExpired {
                throw Failure(
                    itemError: ItemError(
                        .timedOut, stage: .decompress,
                        reason:
                            "decoding took longer than decompress.timeout (\(Units.text(seconds: settings.timeout))) and was stopped"))
            }
            if let item, item.hasRunOut { throw Failure(itemError: item.timedOut(in: .decompress)) }
            let failure = Self.readFailure(error, in: source)
            throw Failure(itemError: failure.error, reasonIsFromLibvips: failure.fromLibvips)
        }
    }

    /// The input's `DecodeMemoryEstimate` for the outputs at `only` (all when nil); nil when the
    /// header cannot be read (decoding then fails and says why).
    func memoryNeeds(of source: EncodedSource, only: [Int]? = nil) -> DecodeMemoryEstimate? {
        look(at: source, estimatingFor: { _ in only })?.needs
    }

    /// What an input's header tells before it is decoded, from one read of it.
    struct HeaderLook: Sendable {
        /// The size it declares, upright.
        let size: ImageSize
        /// What decoding it needs, when an estimate was asked for.
        let needs: DecodeMemoryEstimate?
    }

    /// Reads `source`'s header once: its upright size and, when `outputsMade` is given, the
    /// memory needed to decode it for the outputs that closure picks from the size (their
    /// indices; nil for all). Nil when the header cannot be read (decoding then fails and says
    /// why). Blocking work, through the gate as a decode: the run calls it on the fetch lane.
    func look(at source: EncodedSource, estimatingFor outputsMade: ((ImageSize) -> [Int]?)?) -> HeaderLook? {
        try? pinned(source) { held in
            // Through the gate: a failed open writes libvips' shared error buffer, which a decode
            // running alone to read its own reason must not find written.
            let header = LibvipsErrorText.gate.shared {
                unreadableReason(held) == nil ? try? openHeader(held, options: "fail_on=\(settings.failOn.rawValue)") : nil
            }
            guard let header else { return nil }
            let size = uprightSize(header)
            return HeaderLook(size: size, needs: outputsMade.map { memoryNeeds(of: held, header: header, only: $0(size)) })
        }
    }

    /// What decoding `source`, whose header is `header`, and making the outputs at `only` (all,
    /// for nil) needs: admission's estimate, and `explain`'s.
    func memoryNeeds(of source: EncodedSource, header: VipsImage, only: [Int]?) -> DecodeMemoryEstimate {
        let size = uprightSize(header)
        let loader = header.loader ?? ""
        let unstreamed = DecodeMemoryEstimate.unstreamedDecodeBytes(header)
        let whole = DecodeMemoryEstimate.wholeImageDecodeBytes(header)
        var bytes: Int64
        var passes = 1
        var frames = 1
        let decodeSize: ImageSize
        if keepsAnimation(header, loader: loader, only: only) {
            // Every frame is held, decoded and made into each output.
            frames = header.pageCount
            decodeSize = DecodePlan.decodeSize(stored: size, allowedShrink: allowedShrink(for: size))
            bytes = DecodeMemoryEstimate.imageBytes(decodeSize: decodeSize, outputs: applicableOutputs, frames: frames)
            if decodeSize != size {
                // Resampled in runs (`decodeAnimation`): the run read at full size, and, with more
                // than one, the runs held while they are stacked into one image.
                let storedPixels = min(size.pixelCount * frames, max(Self.animationRunPixels, size.pixelCount))
                bytes += Int64(storedPixels) * 4
                if storedPixels < size.pixelCount * frames { bytes += Int64(decodeSize.pixelCount) * 4 * Int64(frames) }
            }
        } else {
            let plan = decodePlan(for: size, loader: loader, streams: DecodeMemoryEstimate.streams(header), only: only)
            decodeSize = plan.decodeSize
            bytes = plan.estimate
            passes = plan.passes
        }
        let made = only.map { indices in indices.map { outputs[$0] } } ?? applicableOutputs
        let encoding = DecodeMemoryEstimate.encodingBytes(
            decodeSize: decodeSize, alpha: header.hasAlpha, outputs: made, frames: frames, lanes: encodeLanes)
        if case .memory(let fetched) = source { bytes += Int64(fetched.count) }
        let readers = fastReaders.reduce(Int64(0)) { $0 + $1.heldBytes(source, header: header) }
        return DecodeMemoryEstimate(
            estimate: DecodeMemoryEstimate.inputEstimate(
                bytes + whole, passes: passes, unstreamed: unstreamed,
                readers: readers, encoding: encoding),
            unstreamed: unstreamed)
    }

    /// The `DecodePlan` for an input of `size` made into this decoder's outputs, windowed from
    /// `windowedDecodeMinimum`.
    func decodePlan(for size: ImageSize, loader: String, streams: Bool = true, only: [Int]? = nil) -> DecodePlan {
        DecodePlan(
            for: size, outputs: outputs, loader: loader, streams: streams, only: only, applicable: applicable,
            windowedFrom: windowedDecodeMinimum)
    }

    /// How much the decoder may shrink an image of `size`: `DecodePlan.allowedShrink(of:for:)`
    /// over every output made for the input.
    func allowedShrink(for size: ImageSize) -> Double {
        DecodePlan.allowedShrink(of: applicableOutputs, for: size)
    }

    /// The size `header` declares, turned upright when the settings autorotate.
    func uprightSize(_ header: VipsImage) -> ImageSize {
        let upright = settings.autorotate ? header.orientedSize : (width: header.width, height: header.height)
        return ImageSize(width: upright.width, height: upright.height)
    }

    /// Whether the input is an animation decoded with every frame kept: a GIF, WebP or AVIF of more
    /// than one page and no more than `maxFrames`, when the settings keep animations and one of
    /// the outputs made (those at `only`, or all) can animate. Without such an output only the
    /// first frame is decoded, as for a still image.
    func keepsAnimation(_ header: VipsImage, loader: String, only: [Int]? = nil) -> Bool {
        guard keptFrames(header, loader: loader) != nil, header.pageCount <= settings.maxFrames else { return false }
        let made = only.map { indices in indices.map { outputs[$0] } } ?? applicableOutputs
        return made.contains { $0.animates }
    }

    /// The frames of an animated GIF, WebP or AVIF (an image sequence) whose frames the settings
    /// keep; nil for a still image, another format, or `animation` first.
    func keptFrames(_ header: VipsImage, loader: String) -> Int? {
        guard
            settings.animation == .keep, header.pageCount > 1,
            loader.hasPrefix("gifload") || loader.hasPrefix("webpload") || loader == AVIFSequenceReader.loader
        else {
            return nil
        }
        return header.pageCount
    }

    /// Refuses an animation with more frames than `maxFrames`, from its header (libvips counts
    /// the frames without decoding them), whatever the outputs: the limit is the file's.
    func checkFrames(_ header: VipsImage, loader: String, source: EncodedSource) throws(ItemError) {
        guard let declared = keptFrames(header, loader: loader) else { return }
        if let refusal = framesRefused(Self.frameCount(declared, loader: loader, source: source), declared: declared, loader: loader) {
            throw refusal
        }
    }

    /// The refusal of an animation of `frames` whose header of `loader` declares `declared`
    /// (`frameRefusal`), or nil when it is taken.
    private func framesRefused(_ frames: (count: Int?, text: String), declared: Int, loader: String) -> ItemError? {
        guard let refusal = Self.frameRefusal(frames, declared: declared, loader: loader, maxFrames: settings.maxFrames) else { return nil }
        return ItemError(.tooManyPixels, stage: .decompress, reason: "the animation has \(frames.text) frames, \(refusal)")
    }

    /// Why an animation of `frames` (as `frameCount` gives them), whose header declares
    /// `declared`, is refused, or nil: more frames than `maxFrames`, or a GIF of more frames than
    /// libvips' loader decodes, whose decode would silently keep only the first of them.
    static func frameRefusal(_ frames: (count: Int?, text: String), declared: Int, loader: String, maxFrames: Int) -> String? {
        if frames.count ?? declared > maxFrames { return "more than decompress.maxFrames (\(maxFrames))" }
        if loader.hasPrefix("gifload"), frames.count ?? Int.max > gifFramesDecoded {
            return "more than libvips' GIF loader decodes (\(gifFramesDecoded)), which would drop the rest"
        }
        return nil
    }

    /// The frames of an animation whose header of `loader` declares `frames`: where libvips' GIF
    /// loader stopped counting (`gifFramesCounted`), the GIF's blocks are walked to count them
    /// all, so that a message says how many there are. Nil as the count, and "over 4096" as the
    /// text, when the walk cannot count them either.
    static func frameCount(_ frames: Int, loader: String, source: EncodedSource) -> (count: Int?, text: String) {
        guard loader.hasPrefix("gifload"), frames > gifFramesCounted else { return (frames, "\(frames)") }
        guard let counted = GIFStructure.frameCount(of: source), counted > gifFramesCounted else {
            return (nil, "over \(gifFramesCounted)")
        }
        return (counted, "\(counted)")
    }

    /// The frames libvips 8.14's GIF loader counts at most: past them it stops, warns
    /// "Excessive number of frames" and reports one more.
    static let gifFramesCounted = 4096

    /// The frames libvips 8.14's GIF loader decodes at most: the one more it reports.
    static let gifFramesDecoded = gifFramesCounted + 1

    /// What libvips' `error` reading `source` is reported as. Its message for a file cut short or
    /// damaged is often vague ("libpng read error"); the file's structure says why, whatever
    /// libvips' shared error buffer holds.
    static func readFailure(_ error: any Error, in source: EncodedSource) -> (error: ItemError, fromLibvips: Bool) {
        if let damage = FileDamage.reason(in: source) {
            return (ItemError(.undecodable, stage: .decompress, reason: damage, underlying: error), false)
        }
        return (LibvipsErrorText.itemError(for: error, source: source), true)
    }

    /// The header of `source`, opened as a decode opens it, and refused when it has more pixels
    /// than `decompress.maxPixels` allows.
    func openCheckedHeader(_ source: EncodedSource) throws -> VipsImage {
        let header = try openHeader(source, options: "fail_on=\(settings.failOn.rawValue)")
        try refuseOverMaxPixels(header.width * header.height, described: "the image is \(header.width)×\(header.height)")
        if header.loader?.hasPrefix("svgload") == true {
            // libvips cannot give an image a side over its largest coordinate: an SVG declaring
            // one is left at 1 pixel, which passes any limit. At four times the scale a side
            // that fits is at least 4w - 2 (each size is rounded), and one left at 1 stays 1.
            let scaled = try openHeader(source, options: "fail_on=\(settings.failOn.rawValue),scale=4")
            if scaled.width < 4 * header.width - 2 || scaled.height < 4 * header.height - 2 {
                throw ItemError(
                    .tooManyPixels, stage: .decompress,
                    reason: "the SVG declares a side too long for libvips to size (\(Self.largestSide) pixels or more, at four "
                        + "times the declared size), refused as an image of more pixels than decompress.maxPixels "
                        + "(\(settings.maxPixels)) is")
            }
        }
        return header
    }

    /// The longest side libvips gives an image (`VIPS_MAX_COORD`).
    static let largestSide = 10_000_000

    /// Refuses `pixels` above `decompress.maxPixels`, saying what has them (`described`, "the
    /// image is W×H") before the count.
    func refuseOverMaxPixels(_ pixels: Int, described: String) throws(ItemError) {
        guard pixels > settings.maxPixels else { return }
        throw ItemError(
            .tooManyPixels, stage: .decompress,
            reason: "\(described) (\(pixels) pixels), more than decompress.maxPixels (\(settings.maxPixels))")
    }

    /// Opens `source` with libvips for its header, the first time libvips sees it: a PNG whose
    /// chunks before its pixels declare more bytes than it has is refused first
    /// (`PNGStructure`), since libpng sets the declared length aside before finding it missing;
    /// so is an animated WebP of more frames than the file keeps, counted from its chunks
    /// (`WebPStructure`), since libvips takes long to count many. An AVIF image sequence, which
    /// libvips does not read, is described by libavif instead (`AVIFSequenceReader.header()`).
    func openHeader(_ source: EncodedSource, options: String) throws -> VipsImage {
        if Self.isAVIFSequence(source) { return try Self.avifSequenceReader(source).header() }
        let refusal = source.walkingBytes { bytes -> ItemError? in
            if let reason = PNGStructure.headerRefusal(bytes) { return ItemError(.undecodable, stage: .decompress, reason: reason) }
            guard settings.animation == .keep, let frames = WebPStructure.frameCount(bytes) else { return nil }
            return framesRefused((frames, "\(frames)"), declared: frames, loader: "webpload")
        }
        if let refusal = refusal ?? nil { throw refusal }
        return try open(source, options: options)
    }

    /// Opens `source` with libvips; fetched bytes are read where they are (no copy per image).
    /// A pass after the header's names its `loader`, which is not looked for again.
    func open(_ source: EncodedSource, options: String, loader: String? = nil) throws -> VipsImage {
        let image =
            switch source {
            case .file(let path, _, _, _): try VipsImage.open(file: path, options: options, loader: loader)
            case .memory(let bytes): try VipsImage.open(bytes: bytes, options: options, loader: loader)
            }
        return try Self.withXMPOfItsMIMEItem(Self.withProfileOfItsColourBox(image, from: source))
    }
}

extension ImageDecoder {
    /// This decoder for an input that only the outputs at `applicable` (by index) are made for,
    /// nil for all: the others count for nothing in how it is decoded.
    func applying(to applicable: Set<Int>?) -> ImageDecoder {
        var decoder = self
        decoder.applicable = applicable
        return decoder
    }

    /// The outputs made for the input being decoded.
    private var applicableOutputs: [OutputDefinition] {
        guard let applicable else { return outputs }
        return outputs.indices.filter(applicable.contains).map { outputs[$0] }
    }

    /// A decoder for `outputs` within the run's memory account: its allowance for PNGs read
    /// whole (beside the decodes that hold a full-size image), its read-ahead and the estimate
    /// from which windows are decoded alone.
    init(settings: DecompressSettings, outputs: [OutputDefinition], accountant: MemoryAccountant, encodeLanes: Int) {
        self.init(
            settings: settings, outputs: outputs, wholePNGAllowance: accountant.wholePNGReads,
            fullSizeDecodes: accountant.unstreamedDecodes, readAhead: accountant.readAhead,
            windowedDecodeMinimum: accountant.windowedDecodeMinimum, encodeLanes: max(1, encodeLanes))
    }
}
