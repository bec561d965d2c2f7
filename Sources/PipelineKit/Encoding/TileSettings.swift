import Foundation

/// A tile pyramid output (`"tiles"` on an output): the layout viewers read, the tile size and
/// overlap, and the tiles' format, written by libvips' `dzsave` (`TilePyramidWriter`).
public struct TileSettings: Sendable, Hashable {
    /// How the pyramid is laid out on disk, by the names `layout` takes.
    public enum Layout: String, CaseIterable, Sendable {
        /// DeepZoom: `NAME.dzi` and the folder `NAME_files`, one subfolder per level.
        case dz
        /// IIIF Image API 2 (level 0): a folder with `info.json` and the tiles by region.
        case iiif
        /// IIIF Image API 3 (level 0): as `iiif`, with a version 3 `info.json`.
        case iiif3
        /// Zoomify: a folder with `ImageProperties.xml` and `TileGroupN` folders.
        case zoomify
        /// Google Maps: a folder with `z/y/x` tiles and `blank.png`.
        case google

        /// The tile size libvips' `dzsave` gives the layout when none is set.
        var defaultSize: Int {
            switch self {
            case .dz: 254
            case .zoomify, .google: 256
            case .iiif, .iiif3: 512
            }
        }

        /// The overlap libvips' `dzsave` gives the layout when none is set: DeepZoom's one
        /// pixel; the other layouts' viewers expect tiles that do not overlap.
        var defaultOverlap: Int { self == .dz ? 1 : 0 }

        /// The file the layout's viewers open first, relative to the pyramid's folder (for
        /// DeepZoom, the `.dzi` file itself is the output's path).
        var descriptor: String? {
            switch self {
            case .dz: nil
            case .iiif, .iiif3: "info.json"
            case .zoomify: "ImageProperties.xml"
            case .google: "blank.png"
            }
        }

        /// The folder a pyramid at `path` (its `.dzi` file, or its folder) replaces whole each
        /// time it is made: DeepZoom's `NAME_files`, or the folder itself.
        func replacedFolder(ofPyramidAt path: String) -> String {
            self == .dz ? (path as NSString).deletingPathExtension + "_files" : path
        }
    }

    /// A file of each kind and depth the layout writes for the pyramid at `path` (its `.dzi`
    /// file, or its folder), such as an input glob would list on the next run: the descriptor,
    /// and tiles at the first level and at a deep one, numbered with one digit and with two.
    func sampleFiles(ofPyramidAt path: String) -> [String] {
        let suffix = "." + format.format.fileExtension
        let tiles = ["0", "10"].map { number -> String in
            switch layout {
            case .dz: (path as NSString).deletingPathExtension + "_files/\(number)/\(number)_\(number)" + suffix
            case .iiif, .iiif3: path + "/\(number),\(number),1\(number),1\(number)/1\(number),/0/default" + suffix
            case .zoomify: path + "/TileGroup\(number)/\(number)-\(number)-\(number)" + suffix
            case .google: path + "/\(number)/\(number)/\(number)" + suffix
            }
        }
        return (layout.descriptor.map { [path + "/" + $0] } ?? []) + tiles
    }

    /// The formats tiles are written in.
    public enum TileFormat: String, CaseIterable, Sendable {
        /// JPEG, PNG or WebP tiles.
        case jpeg, png, webp

        /// The encoder format of the same name.
        var format: EncoderSettings.Format {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            }
        }
    }

    /// The layout written.
    public var layout: Layout
    /// The tile side in pixels, overlap not counted.
    public var size: Int
    /// Pixels each tile shares with its neighbours on every side.
    public var overlap: Int
    /// The tiles' format.
    public var format: TileFormat
    /// JPEG and WebP tiles: 1–100.
    public var quality: Int
    /// IIIF layouts: the URL the pyramid's folder is served under, without the folder's name,
    /// which `info.json` gives viewers as the image's `id` (with the folder's name appended).
    /// nil: libvips' placeholder, `https://example.com/iiif`.
    public var id: String?

    /// Settings for `layout`, each option not given at libvips' default for that layout.
    public init(
        layout: Layout = .dz, size: Int? = nil, overlap: Int? = nil, format: TileFormat = .jpeg, quality: Int? = nil, id: String? = nil
    ) {
        self.layout = layout
        self.size = size ?? layout.defaultSize
        self.overlap = overlap ?? layout.defaultOverlap
        self.format = format
        self.quality = quality ?? EncoderSettings.defaultQuality(format.format)
        self.id = id
    }

    /// The `tiles` object's shape: its options, with the defaults libvips' `dzsave` gives them.
    static var shape: ValueShape {
        .object([
            .choice(
                "layout", Layout.self, default: .dz,
                help: "dz (DeepZoom: the path names the .dzi file), iiif, iiif3, zoomify or google (the path names the folder)"),
            Option(
                "size", .integer(1...8192), default: JSONNode(plain: Layout.dz.defaultSize),
                defaultRule: "254 for dz, 256 for zoomify and google, 512 for iiif and iiif3",
                help: "tile side in pixels, overlap not counted (default: 254 for dz, 256 for zoomify and google, 512 for iiif and iiif3)"),
            Option(
                "overlap", .integer(0...8192), default: JSONNode(plain: Layout.dz.defaultOverlap),
                defaultRule: "1 for dz, 0 for the other layouts",
                help:
                    "pixels each tile shares with its neighbours, less than size; dz alone overlaps its tiles "
                    + "(default: 1 for dz, 0 for the other layouts)"),
            .choice("format", TileFormat.self, default: .jpeg, help: "the tiles' format"),
            .integer(
                "quality", in: 1...100, default: EncoderSettings.defaultQuality(.jpeg),
                help: "jpeg and webp tiles: quality, 1–100; png tiles are lossless"),
            Option(
                "id", .string(nonEmpty: true),
                help:
                    "iiif and iiif3: the http(s) URL the pyramid's folder is served under, without the folder's name; "
                    + "info.json gives viewers this URL and the folder's name as the image's id (default: libvips' https://example.com/iiif)",
                example: #""https://images.example.org/iiif""#),
        ])
    }

    /// Reads a `tiles` object checked against `shape`: the rules across its options.
    init(options: ProcessorOptions) throws(OptionError) {
        let layout = try options.choice("layout", as: Layout.self)
        let format = try options.choice("format", as: TileFormat.self)
        let quality = options.has("quality") ? try options.int("quality") : nil
        if quality != nil, format == .png {
            throw OptionError(option: "quality", "png tiles are lossless: quality applies to jpeg and webp tiles")
        }
        let id = options.has("id") ? try options.string("id") : nil
        if let id {
            guard layout == .iiif || layout == .iiif3 else {
                throw OptionError(option: "id", "only the iiif and iiif3 layouts give an id (in info.json)")
            }
            guard let url = URL(string: id), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw OptionError(
                    option: "id", "expected an http(s) URL such as \"https://images.example.org/iiif\", got \(id.quotedValue)")
            }
        }
        self.init(
            layout: layout, size: options.has("size") ? try options.int("size") : nil,
            overlap: options.has("overlap") ? try options.int("overlap") : nil, format: format, quality: quality,
            id: id.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
        guard overlap < size else {
            throw OptionError(option: "overlap", "the overlap (\(overlap)) must be less than the tile size (\(size))")
        }
        // libvips writes the other layouts' tiles side by side whatever the overlap says, and
        // the manifest would tell viewers of an overlap the tiles do not have.
        guard overlap == 0 || layout == .dz else {
            throw OptionError(
                option: "overlap", "only the dz layout overlaps its tiles: \(layout.rawValue) tiles lie side by side, so its overlap is 0")
        }
    }

    /// The encoder settings an output with these tiles reports and is fingerprinted by: the
    /// tiles' format and quality, metadata stripped (each tile would carry it).
    var encoder: EncoderSettings {
        EncoderSettings(format: format.format, quality: quality, strip: true)
    }

    /// The saver suffix for each tile, for example `.jpg[Q=80,strip=true]`.
    var tileSuffix: String {
        switch format {
        case .jpeg: ".jpg[Q=\(quality),strip=true]"
        case .webp: ".webp[Q=\(quality),strip=true]"
        case .png: ".png[strip=true]"
        }
    }

    /// What decides the files written, for the journal's fingerprint and `explain`.
    var identity: String {
        "tiles layout=\(layout.rawValue) size=\(size) overlap=\(overlap) \(tileSuffix)" + (id.map { " id=\($0)" } ?? "")
    }

    /// What `dzsave` holds beside the image while it writes a pyramid of an image `width`
    /// pixels wide with `bands` bands: it streams, keeping for every level a strip of tiles
    /// (a tile high and overlap above and below, twice over while one strip is written and the
    /// next filled), and the levels are each half as wide as the one before; plus each
    /// tile's encoder. Measured peaks are in Benchmarks/RESULTS.md ("Tile pyramids").
    func workingBytes(width: Int, bands: Int) -> Int64 {
        let stripRows = Int64(size + 2 * overlap)
        let levels = 2 * Int64(width) + Int64(size)
        return 4_000_000 + 2 * levels * stripRows * Int64(bands)
    }
}

extension OutputDefinition {
    /// What the encoder holds beside the image while it writes this output's image of `size`
    /// (`alpha`: with an alpha band): a tile pyramid's strips (`TileSettings.workingBytes`), at 4
    /// bytes a pixel as the rest of an estimate is counted, or the image encoder's own, for
    /// `frames` frames when the output animates.
    func encodingBytes(size: ImageSize, alpha: Bool, frames: Int = 1) -> Int64 {
        if let tiles { return tiles.workingBytes(width: size.width, bands: 4) }
        return encoder.workingBytes(framePixels: size.pixelCount, frames: animates ? frames : 1, alpha: alpha)
    }

    /// Whether an animated input stays animated in this output: an animated GIF or WebP, never
    /// a tile pyramid (its tiles are stills of the first frame).
    var animates: Bool { tiles == nil && encoder.format.animates }

    /// How `explain` names what the output writes: the format and the saver's options, or the
    /// tile pyramid's layout and tiles.
    var encodingDescription: String {
        if let tiles { return "\(tiles.layout.rawValue) tiles (\(tiles.identity))" }
        return "\(encoder.format.rawValue) (\(encoder.explained))"
    }
}
