/// How an input of some size is decoded: the image the outputs fan out from, the shrink on
/// load that makes it, and the outputs that decode a window of their own instead
/// (`ImageProcessing.decodeWindow(for:)`).
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
    /// Rows of full width libvips' resize keeps in the passes together
    /// (`DecodeMemoryEstimate.wideRowsBytes`).
    var wideRowsBytes: Int64
    /// The decoded images and each output's image at 4 bytes a pixel
    /// (`DecodeMemoryEstimate.imageBytes`), and `wideRowsBytes`.
    var estimate: Int64

    /// Passes over the file, which run side by side: the whole image's, and one a window.
    var passes: Int { (decodesWhole ? 1 : 0) + windows.count }
}

extension DecodePlan {
    /// The plan for an input of `size` made into `outputs`: decoded once for every output,
    /// unless that holds `windowedFrom` or more (`MemoryAccountant.windowedDecodeMinimum`) and
    /// the outputs that keep a window (a cover crop) decoding it alone would hold at most half
    /// as much. A pass over the file per window costs time, so only images whose decode-once
    /// rows would be very wide take it.
    ///
    /// `only` names the outputs (by index) to be made when not all are (the others are up to
    /// date): the plan is the whole run's, so each output is made from what a full run makes
    /// it from, but windows of outputs not made are not decoded, nor the whole image when no
    /// output made needs it. `streams` false (an interlaced PNG, a progressive JPEG: every pass
    /// would hold the full image) allows no windows. `applicable` names the outputs made for
    /// the input at all (an output's `inputs` may leave it out), nil for all: no other counts.
    init(
        for size: ImageSize, outputs: [OutputDefinition], loader: String, streams: Bool = true, only: [Int]? = nil,
        applicable: Set<Int>? = nil, windowedFrom minimum: Int64
    ) {
        self = Self.wholeRun(for: size, outputs: outputs, applicable: applicable, loader: loader, streams: streams, windowedFrom: minimum)
        guard let only, !only.isEmpty, !windows.isEmpty else { return }
        let made = Set(only)
        windows = windows.filter { made.contains($0.key) }
        decodesWhole = made.contains { windows[$0] == nil }
    }

    /// The plan for every output.
    private static func wholeRun(
        for size: ImageSize, outputs: [OutputDefinition], applicable: Set<Int>?, loader: String, streams: Bool,
        windowedFrom minimum: Int64
    ) -> DecodePlan {
        let made = outputs.indices.filter { applicable?.contains($0) ?? true }
        let allowed = allowedShrink(of: made.map { outputs[$0] }, for: size)
        let decodeSize = Self.decodeSize(stored: size, allowedShrink: allowed)
        let wide = DecodeMemoryEstimate.wideRowsBytes(size: size, decodeSize: decodeSize, loader: loader)
        let once = DecodePlan(
            decodeSize: decodeSize, allowedShrink: allowed, wideRowsBytes: wide,
            estimate: DecodeMemoryEstimate.imageBytes(decodeSize: decodeSize, outputs: made.map { outputs[$0] }) + wide)
        // A loader that draws at a scale makes the whole frame at it; it has no streamed rows to crop.
        guard streams, !drawsAtScale(loader), once.estimate >= minimum else { return once }
        var windows: [Int: DecodeWindow] = [:]
        for index in made {
            if let window = outputs[index].steps.first?.decodeWindow(for: size) { windows[index] = window }
        }
        guard !windows.isEmpty else { return once }
        let rest = made.filter { windows[$0] == nil }.map { outputs[$0] }
        let restAllowed = allowedShrink(of: rest, for: size)
        let restSize = Self.decodeSize(stored: size, allowedShrink: restAllowed)
        // The passes run side by side, and every image they make is held for the fan-out.
        var held: Int64 = 0
        var rows: Int64 = 0
        if !rest.isEmpty {
            held += DecodeMemoryEstimate.imageBytes(decodeSize: restSize, outputs: rest)
            rows += DecodeMemoryEstimate.wideRowsBytes(size: size, decodeSize: restSize, loader: loader)
        }
        for (index, window) in windows {
            held += DecodeMemoryEstimate.imageBytes(decodeSize: window.size, outputs: [outputs[index]])
            rows += DecodeMemoryEstimate.wideRowsBytes(
                size: ImageSize(width: window.width, height: window.height),
                decodeSize: window.size, loader: loader)
        }
        let split = DecodePlan(
            decodeSize: restSize, allowedShrink: restAllowed, windows: windows, decodesWhole: !rest.isEmpty,
            wideRowsBytes: rows, estimate: held + rows)
        return split.estimate * 2 <= once.estimate ? split : once
    }

    /// The size to decode to: the stored size divided by the shrink every output allows, so the
    /// output that needs the most pixels gets exactly what it needs (and resizes by 1, a no-op).
    static func decodeSize(stored: ImageSize, allowedShrink: Double) -> ImageSize {
        guard allowedShrink > 1 else { return stored }
        return ImageSize(
            width: max(1, Int((Double(stored.width) / allowedShrink).rounded())),
            height: max(1, Int((Double(stored.height) / allowedShrink).rounded()))
        )
    }

    /// How much the decoder may shrink for `outputs`: the least any output's first step allows.
    /// A plugin's answer that is not a finite factor of at least 1 counts as 1 (no shrink).
    ///
    /// An output's `widths` are outputs of their own here, each starting with its resize, so the
    /// widest width the image needs decides. Those the image is too narrow for are not made, but
    /// counting them changes nothing: they allow no shrink, and neither does the image's own
    /// width, which then stands in for them.
    static func allowedShrink(of outputs: [OutputDefinition], for size: ImageSize) -> Double {
        let allowed = outputs.map { $0.steps.first?.allowedInputShrink(for: size) ?? 1 }.min() ?? 1
        return allowed.isFinite && allowed >= 1 ? allowed : 1
    }

    /// Whether `loader` makes the image at any scale asked for while it reads: libwebp resamples
    /// as it decodes, and librsvg and poppler draw at the scale. Such a file is read straight at
    /// the size the outputs need; drawn at its stored size first, a hostile SVG's filter could
    /// take minutes and gigabytes inside one call the decode's deadline cannot stop.
    static func drawsAtScale(_ loader: String) -> Bool {
        ["webpload", "svgload", "pdfload"].contains { loader.hasPrefix($0) }
    }

    /// The libvips load options that bring an image stored at `stored` towards `target` while it
    /// is read, which the outputs allow by `allowed`; and the factor counted as the shrink on load.
    static func loadScaling(
        loader: String, stored: ImageSize, target: ImageSize, allowed: Double, fast: Bool
    ) -> (options: [String], shrink: Int) {
        if drawsAtScale(loader), target != stored {
            // As vips_thumbnail does: the target itself, not a full-size frame at 4 bytes a pixel.
            return (["scale=\(Double(target.width) / Double(stored.width))"], Int(allowed.rounded(.down)))
        }
        let shrink = loadShrink(allowed: allowed, loader: loader, fast: fast, stored: stored)
        return (shrink > 1 ? ["shrink=\(shrink)"] : [], shrink)
    }

    /// The JPEG shrink-on-load factor (1, 2, 4 or 8). libjpeg shrinks with a reduced-size
    /// IDCT while decoding, which saves most of the decoding work. `fast` takes the whole factor
    /// the outputs allow, as sharp does, which is what makes the standard job faster than the
    /// vips_thumbnail-based reference (Benchmarks/RESULTS.md); otherwise leave a factor of two
    /// for the resampling that follows, as `vips_thumbnail` does, for the finest detail.
    ///
    /// Never more than the `stored` image's shorter side: shrunk by more, a banner a few pixels
    /// high would have no rows, and libvips aborts the whole process on such an image.
    static func loadShrink(allowed: Double, loader: String, fast: Bool, stored: ImageSize) -> Int {
        guard loader.hasPrefix("jpegload") else { return 1 }
        let margin = fast ? 1.0 : 2.0
        let shortest = min(stored.width, stored.height)
        for factor in [8, 4, 2] where allowed >= Double(factor) * margin && factor <= shortest { return factor }
        return 1
    }
}
