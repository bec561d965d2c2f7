public import Foundation
public import PipelineKit
public import Vips

/// Places another image (a logo, a watermark, a frame) over each image, as sharp's `composite`.
///
/// The overlay is a file relative to the pipeline file, or an http(s) URL fetched through the
/// fetch stage and the disk cache; either way it is decoded once per run, not once per input.
/// It sits where `gravity` says (or at `left`/`top`, which win over a gravity given too, as in
/// sharp), at `opacity`, blended with `blend`; with `width` it is scaled to that fraction of
/// each image's width (a logo that scales with the output); with `tile` it repeats across the
/// whole image, the grid aligned by `gravity` as sharp aligns it (or, with `left`/`top`, the
/// grid shifted by that offset). The size never changes: an overlay reaching past the edges is
/// clipped. An animated overlay is read as its first frame, laid on every frame of an animation.
public struct Composite: ImageProcessing {
    /// The step's key in a pipeline file.
    public static let name = "composite"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary =
        "Places another image (file or URL, loaded once per run) over the image: gravity or left/top, opacity, blend mode, tile, width as a fraction."

    /// libvips' blend modes, by the names libvips gives them (sharp uses the same ones).
    public static let blendModes = [
        "over", "multiply", "screen", "overlay", "darken", "lighten", "colour-dodge",
        "colour-burn", "hard-light", "soft-light", "difference", "exclusion", "add", "saturate",
        "clear", "source", "in", "out", "atop", "dest", "dest-over", "dest-in", "dest-out",
        "dest-atop", "xor",
    ]
    /// The blend modes whose result can be less opaque than the base (Porter-Duff's modes that
    /// keep the base only where the overlay is, or is not): an opaque base gains an alpha band.
    static let clearingModes: Set<String> = ["clear", "source", "in", "out", "dest-in", "dest-out", "dest-atop", "xor"]
    /// Compass points only: a smart crop's strategies have no meaning for placing an overlay.
    public static let gravities = Gravity.names.filter { Gravity(name: $0)?.interest == nil }

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        Option(
            "image", .string(nonEmpty: true), required: true,
            help:
                "The overlay: a file relative to the pipeline file, or an http(s) URL (fetched once, through the cache, without fetch.headers); "
                + "an animated one lays its first frame on every frame."
        ),
        .choice(
            "gravity", gravities, default: "centre",
            help:
                "Where the overlay sits; left and top, when given, win over it. With tile, where the grid of tiles is aligned: one tile touches that edge or corner (or, centred along a side, sits in the middle); with tile and left/top it still decides how many tiles the grid has."
        ),
        .integer(
            "left", in: -10_000_000...10_000_000,
            help: "The overlay's left edge in pixels (with top; a gravity given too is ignored, as in sharp)."),
        .integer(
            "top", in: -10_000_000...10_000_000,
            help: "The overlay's top edge in pixels (with left; a gravity given too is ignored, as in sharp)."),
        .number("opacity", in: 0...1, default: 1, help: "How opaque the overlay is, 0 (invisible) to 1."),
        .choice(
            "blend", blendModes, default: "over",
            help:
                "How overlay and image combine, as libvips names blend modes. Those that can clear pixels (clear, source, in, out, dest-in, dest-out, dest-atop, xor) give an opaque image an alpha band."
        ),
        .boolean(
            "tile", default: false,
            help:
                "Repeat the overlay across the whole image, the tiles aligned by gravity, or with left and top shifted by that offset (at most to the far side of the grid sharp makes, whose tile count gravity still decides)."
        ),
        .number("width", in: 0.001...1, help: "Scale the overlay to this fraction of the image's width (keeping its aspect ratio)."),
    ]

    /// Where the overlay comes from: an absolute file URL or an http(s) URL.
    public let image: URL
    /// Where the overlay goes: by gravity, or at an offset.
    public let placement: Placement
    /// How opaque the overlay is, 0 (invisible) to 1.
    public let opacity: Double
    /// The blend mode, one of `blendModes`.
    public let blend: String
    /// Whether the overlay is repeated across the whole image.
    public let tile: Bool
    /// The overlay's width as a fraction of the image's, or nil for its own size.
    public let widthFraction: Double?
    /// With `tile` and an offset: the gravity given too (else centre), which still decides how
    /// many tiles the grid has, as in sharp. Unused otherwise.
    public let gridGravity: Gravity

    /// Where the overlay goes.
    public enum Placement: Hashable, Sendable {
        /// At a compass point of the image.
        case gravity(Gravity)
        /// With its top-left corner at these pixels (negative: partly off the image).
        case offset(left: Int, top: Int)
    }

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        let reference = try options.string("image")
        let image = try Self.resolve(reference, against: options.baseDirectory)
        let left = try options.optionalInt("left"), top = try options.optionalInt("top")
        let gravityName = try options.string("gravity")
        guard let gravity = Gravity(name: gravityName) else {
            throw OptionError(option: "gravity", "unknown value \(gravityName.quotedValue)")
        }
        let placement: Placement
        switch (left, top) {
        case (let left?, let top?):
            // A gravity given too is ignored, as sharp ignores it: the offset says exactly where.
            placement = .offset(left: left, top: top)
        case (nil, nil):
            placement = .gravity(gravity)
        case (nil, _):
            throw OptionError(option: "left", "is required with top")
        case (_, nil):
            throw OptionError(option: "top", "is required with left")
        }
        try self.init(
            image: image, placement: placement, opacity: options.double("opacity"), blend: options.string("blend"),
            tile: options.bool("tile"), widthFraction: options.optionalDouble("width"), gridGravity: gravity)
    }

    /// A composite for use from Swift; `image` is an absolute file URL or an http(s) URL.
    public init(
        image: URL, placement: Placement = .gravity(.centre), opacity: Double = 1, blend: String = "over",
        tile: Bool = false, widthFraction: Double? = nil, gridGravity: Gravity = .centre
    ) throws(OptionError) {
        guard (0...1).contains(opacity) else { throw OptionError(option: "opacity", "must be between 0 and 1") }
        guard Self.blendModes.contains(blend) else { throw OptionError(option: "blend", "unknown blend mode \(blend.quotedValue)") }
        if let widthFraction, !(0.001...1).contains(widthFraction) {
            throw OptionError(option: "width", "must be a fraction of the image's width, between 0.001 and 1")
        }
        self.image = image
        self.placement = placement
        self.opacity = opacity
        self.blend = blend
        self.tile = tile
        self.widthFraction = widthFraction
        self.gridGravity = gridGravity
    }

    /// An http(s) URL as it is; anything else a path relative to `base`, which must exist now,
    /// so a misspelt logo is found by `validate`, not after decoding every input.
    static func resolve(_ reference: String, against base: URL) throws(OptionError) -> URL {
        let lowered = reference.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: reference), url.host != nil else {
                // Named as every URL is shown: the mistake may be beside a password or a signature.
                throw OptionError(option: "image", "\(CredentialRedaction().redact(reference).quotedValue) is not a valid URL")
            }
            return url
        }
        if let colon = reference.firstIndex(of: ":"), reference[..<colon].allSatisfy(\.isLetter), reference[..<colon].count > 1 {
            throw OptionError(option: "image", "only files and http(s) URLs can be overlays, not \(reference[..<colon]):")
        }
        let url = URL(fileURLWithPath: reference, relativeTo: base).standardizedFileURL
        // Checked as the run reads it: a regular file, not a folder, FIFO, device or socket.
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            throw OptionError(option: "image", "no such file: \(url.path)", fileAtFault: url.path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw OptionError(
                option: "image", "\(url.path) is \(RegularFile.kind(of: status)), not a regular file", fileAtFault: url.path)
        }
        // Its header only: a file that is no image fails here, not every input of the run.
        do {
            _ = try VipsImage.open(file: url.path)
        } catch {
            throw OptionError(option: "image", "\(url.path) is not an image libvips can read: \(error)", fileAtFault: url.path)
        }
        return url
    }

    /// The overlay, which the run fetches and decodes once and hands to `process` through the context.
    public var resources: [URL] { [image] }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        let placementText: String
        switch placement {
        case .gravity(let gravity): placementText = "gravity:\(gravity.rawValue)"
        case .offset(let left, let top): placementText = "left:\(left),top:\(top)"
        }
        let scale = widthFraction.map { ",width:\($0)" } ?? ""
        var grid = ""
        if tile, case .offset = placement { grid = ",grid:\(gridGravity.rawValue)" }
        return
            "composite(image:\(image.isFileURL ? image.path : image.absoluteString),\(placementText),opacity:\(opacity),blend:\(blend),tile:\(tile)\(scale)\(grid))"
    }

    /// The size of the input: the step keeps every pixel's place.
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ base: VipsImage, context: ProcessingContext) throws -> VipsImage {
        var overlay = try context.resource(image)
        // A colour overlay keeps its colour on a greyscale image, which becomes colour.
        let base = overlay.colourBands >= 3 ? try base.inColour() : base
        overlay = try matchingColourSpace(overlay, to: base)
        if let widthFraction {
            let width = max(1, Int((Double(base.width) * widthFraction).rounded()))
            let height = max(1, Int((Double(overlay.height) * Double(width) / Double(overlay.width)).rounded()))
            overlay = try overlay.resampled(to: ImageSize(width: width, height: height))
        }
        if !overlay.hasAlpha { overlay = try overlay.appendingBand(value: 255) }
        if opacity < 1 {
            // Scale the alpha band alone.
            let factors = Array(repeating: 1.0, count: overlay.bands - 1) + [opacity]
            overlay = try overlay.applying("linear", ["a": .numbers(factors), "b": .numbers(Array(repeating: 0, count: overlay.bands))])
                .cast(to: .uchar)
        }
        var x = 0, y = 0
        if tile {
            overlay = try tiled(overlay, over: base)
        } else {
            switch placement {
            case .offset(let left, let top):
                (x, y) = (left, top)
            case .gravity(let gravity):
                (x, y) = gravity.origin(of: (overlay.width, overlay.height), in: (base.width, base.height))
            }
        }
        let composited = try Vips.call(
            "composite2",
            [
                "base": .image(base), "overlay": .image(overlay), "mode": .string(blend), "x": .integer(x), "y": .integer(y),
            ])["out"]?.image
        guard var result = composited else { throw VipsError(operation: "composite2", message: "gave no image") }
        result = try result.cast(to: base.bandFormat)
        // An opaque image stays opaque under a mode that cannot clear it: drop the alpha band
        // compositing added. Under one that can (`dest-out` punching a hole), the hole is the point.
        if !base.hasAlpha && result.bands > base.bands && !Self.clearingModes.contains(blend) {
            result = try result.applying("extract_band", ["band": .integer(0), "n": .integer(base.bands)])
        }
        return result
    }

    /// The overlay repeated to cover `base`, aligned as sharp aligns tiles: enough tiles to cover
    /// each side, an odd number along a side where the gravity centres (so that one tile sits in
    /// the middle), and the base's window taken from that grid where the gravity says, or at the
    /// offset (kept within the grid).
    private func tiled(_ overlay: VipsImage, over base: VipsImage) throws(VipsError) -> VipsImage {
        let gravity: Gravity
        switch placement {
        case .gravity(let chosen): gravity = chosen
        case .offset: gravity = gridGravity
        }
        var across = (base.width + overlay.width - 1) / overlay.width
        var down = (base.height + overlay.height - 1) / overlay.height
        if [.centre, .north, .south].contains(gravity) { across |= 1 }
        if [.centre, .east, .west].contains(gravity) { down |= 1 }
        let grid = try overlay.applying("replicate", ["across": .integer(across), "down": .integer(down)])
        let (left, top): (Int, Int)
        switch placement {
        case .gravity:
            (left, top) = gravity.origin(of: (base.width, base.height), in: (grid.width, grid.height))
        case .offset(let x, let y):
            (left, top) = (min(max(0, x), grid.width - base.width), min(max(0, y), grid.height - base.height))
        }
        return try grid.extracted(left: left, top: top, width: base.width, height: base.height)
    }

    /// The overlay in the base's colour space (greyscale or sRGB), so the bands line up.
    private func matchingColourSpace(_ overlay: VipsImage, to base: VipsImage) throws -> VipsImage {
        let baseColourBands = base.bands - (base.hasAlpha ? 1 : 0)
        let overlayColourBands = overlay.bands - (overlay.hasAlpha ? 1 : 0)
        guard baseColourBands != overlayColourBands else { return overlay }
        return try overlay.converted(to: baseColourBands == 1 ? .blackAndWhite : .sRGB)
    }
}
