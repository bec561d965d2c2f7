import Foundation

/// What a run made, for web pages: per input, its intrinsic size, and per output and format the
/// files sorted by width with a ready `srcset`, the file an `<img>` should name, and the
/// placeholders the output asked for. Written as JSON at the end of a run (`"manifest"` in the
/// pipeline file); `pipeline html` turns an entry into a `<picture>` element.
///
/// The JSON is stable: keys sorted, inputs sorted by source, files by width, formats in the
/// order the output lists them; a run that changes nothing writes the same bytes.
public struct ImageManifest: Codable, Sendable, Equatable {
    /// The manifest format's version.
    public var version: Int
    /// The pipeline's `name`.
    public var pipeline: String
    /// Every input the manifest knows, sorted by source.
    public var inputs: [Input]
    /// In a shard's manifest alone: the run that wrote it (see `ShardRun`).
    public var shard: ShardRun?

    /// A manifest of the current format's version; `shard` for a shard's.
    public init(pipeline: String, inputs: [Input], shard: ShardRun? = nil) {
        self.version = 1
        self.pipeline = pipeline
        self.inputs = inputs.sorted { Self.sortsBefore($0.source, $1.source) }
        self.shard = shard
    }

    /// The manifest's order of sources: as strings, and byte for byte where two are the same
    /// text in other encodings (`é` in one code point or two), so that the order never depends
    /// on which the run finished first.
    static func sortsBefore(_ first: String, _ second: String) -> Bool {
        first == second ? first.utf8.lexicographicallyPrecedes(second.utf8) : first < second
    }

    /// One input: a file path relative to the pipeline file's folder (as reports name it), or a URL.
    public struct Input: Codable, Sendable, Equatable {
        /// The input's path relative to the pipeline file's folder, or its URL.
        public var source: String
        /// The input's size, upright.
        public var width: Int
        /// The input's height, upright.
        public var height: Int
        /// By output name.
        public var outputs: [String: Output]

        /// An input of `width` by `height` pixels with its outputs.
        public init(source: String, width: Int, height: Int, outputs: [String: Output]) {
            self.source = source
            self.width = width
            self.height = height
            self.outputs = outputs
        }
    }

    /// One output of one input: its files by format.
    public struct Output: Codable, Sendable, Equatable {
        /// In the order the output lists its formats.
        public var formats: [Format]
        /// The file an `<img>` names: the widest of the last format listed (the most widely supported, by convention).
        public var fallback: File?
        /// The placeholders the output asked for, or nil.
        public var placeholders: Placeholders?
        /// The file the placeholders were computed from, as its journal fingerprint and its size
        /// in bytes, and what they were computed with (`FINGERPRINT BYTES RECIPE`, such as
        /// `… 4242 lqip:16w:q40,dominantColor`): a later run keeps them only for that same file,
        /// list and settings.
        public var placeholdersFrom: String?
        /// A tiles output's pyramid (its `formats` are then empty), or nil.
        public var tiles: Tiles?
        /// The output's art direction crops, in the order the output lists them; nil when none.
        public var art: [Art]?
        /// The files of the output that the run writing this entry failed to make, as its report
        /// names them (`320 px, avif`); nil when it made them all. The entry lists only the
        /// files that were made, so a page can tell a partial set from a whole one.
        public var failed: [String]?

        /// An output's files, with `fallback` the widest of the last format; or its tile pyramid.
        public init(formats: [Format], placeholders: Placeholders?, placeholdersFrom: String? = nil, tiles: Tiles? = nil) {
            self.formats = formats
            self.fallback = formats.last?.files.last
            self.placeholders = placeholders
            self.placeholdersFrom = placeholdersFrom
            self.tiles = tiles
        }
    }

    /// One art direction crop of an output: the media query it is for, and its files by format.
    public struct Art: Codable, Sendable, Equatable {
        /// The media query, for `<source media>`.
        public var media: String
        /// The crop's aspect ratio as the pipeline file wrote it (`1:1`).
        public var aspectRatio: String
        /// Its sources' `sizes`, when not the page's.
        public var sizes: String?
        /// In the order the output lists its formats.
        public var formats: [Format]

        /// A crop for `media` with its files.
        public init(media: String, aspectRatio: String, sizes: String?, formats: [Format]) {
            self.media = media
            self.aspectRatio = aspectRatio
            self.sizes = sizes
            self.formats = formats
        }
    }

    /// A tile pyramid written for zooming viewers (OpenSeadragon, Leaflet, IIIF viewers).
    public struct Tiles: Codable, Sendable, Equatable {
        /// `dz`, `iiif`, `iiif3`, `zoomify` or `google`.
        public var layout: String
        /// `urlPrefix` followed by `path`, percent-encoded: what a viewer is given.
        public var url: String
        /// The `.dzi` file (dz) or the pyramid's folder (the other layouts), relative to the
        /// manifest's folder, with `/` separators.
        public var path: String
        /// The full-size image's width in pixels.
        public var width: Int
        /// The full-size image's height in pixels.
        public var height: Int
        /// The tile side in pixels, overlap not counted.
        public var tileSize: Int
        /// Pixels each tile shares with its neighbours.
        public var overlap: Int
        /// The tiles' format (`jpeg`, `png`, `webp`).
        public var format: String
        /// The tiles' MIME type.
        public var mimeType: String
        /// The size of every file of the pyramid together, in bytes.
        public var bytes: Int

        /// A pyramid as a run wrote it.
        public init(
            layout: String, url: String, path: String, width: Int, height: Int, tileSize: Int, overlap: Int, format: String,
            mimeType: String, bytes: Int
        ) {
            self.layout = layout
            self.url = url
            self.path = path
            self.width = width
            self.height = height
            self.tileSize = tileSize
            self.overlap = overlap
            self.format = format
            self.mimeType = mimeType
            self.bytes = bytes
        }
    }

    /// The files of one format, narrowest first.
    public struct Format: Codable, Sendable, Equatable {
        /// The format's name (`avif`, `webp`, `jpeg`, …).
        public var format: String
        /// Its MIME type, for `<source type>`.
        public var mimeType: String
        /// Its files, narrowest first.
        public var files: [File]
        /// `url 480w, url 960w, …`, ready for `srcset`.
        public var srcset: String

        /// A format's files, sorted by width, with their `srcset`.
        public init(format: String, mimeType: String, files: [File]) {
            self.format = format
            self.mimeType = mimeType
            self.files = files.sorted { ($0.width, $0.path) < ($1.width, $1.path) }
            self.srcset = self.files.map { "\($0.url) \($0.width)w" }.joined(separator: ", ")
        }
    }

    /// One file written.
    public struct File: Codable, Sendable, Equatable {
        /// `urlPrefix` followed by `path`, percent-encoded (`File.url(prefix:path:)`).
        public var url: String
        /// Relative to the manifest's folder, with `/` separators.
        public var path: String
        /// The file's width in pixels.
        public var width: Int
        /// The file's height in pixels.
        public var height: Int
        /// The file's size in bytes.
        public var bytes: Int
        /// The file's format.
        public var format: String
        /// The file's MIME type.
        public var mimeType: String
        /// The quality a quality target's search chose; nil for a fixed quality.
        public var quality: Int?
        /// The file's SSIMULACRA 2 score when a quality target's search chose its quality.
        public var ssimulacra2: Double?

        /// A file, as a run wrote it; `quality` and `ssimulacra2` when a quality target chose them.
        public init(
            url: String, path: String, width: Int, height: Int, bytes: Int, format: String, mimeType: String,
            quality: Int? = nil, ssimulacra2: Double? = nil
        ) {
            self.quality = quality
            self.ssimulacra2 = ssimulacra2
            self.url = url
            self.path = path
            self.width = width
            self.height = height
            self.bytes = bytes
            self.format = format
            self.mimeType = mimeType
        }

        /// The URL of the file at `path` (relative, `/` separators) below `prefix`: each path
        /// segment percent-encoded as RFC 3986 says, so `with space.jpg` or `q?x#y%20.jpg` reach
        /// the server as the file's name; the prefix keeps what a URI may hold as written. A
        /// prefix names a folder: `/img` is read as `/img/`, never run into the file's name.
        public static func url(prefix: String, path: String) -> String {
            let folder = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
            return URLPathEncoding.prefix(folder) + URLPathEncoding.path(path)
        }
    }

    /// The manifest as stable, indented JSON text ending in a newline.
    public func jsonData() throws -> Data {
        var data = try Self.makeEncoder().encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// The encoder of `jsonData()`, which `ManifestSpool` also prints each entry with.
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Reads a manifest written by `jsonData()`.
    public static func read(from url: URL) throws -> ImageManifest {
        try JSONDecoder().decode(ImageManifest.self, from: RegularFile.contents(of: url.path))
    }

    /// The entry for `source` (as the manifest names it, or a path ending in it), or nil when
    /// there is none or several end in it (`candidates(for:)` lists them).
    public func input(_ source: String) -> Input? {
        let found = candidates(for: source)
        return found.count == 1 ? found[0] : nil
    }

    /// The entries `source` may mean: the one the manifest names exactly so (a URL as the
    /// pipeline file writes it, too: the manifest names it with its secrets hidden), else every
    /// entry whose path ends in it at a `/` (`x.png` is both `coll/a/x.png` and `coll/b/x.png`;
    /// a web URL's path ends before its `;` parameters and its query).
    public func candidates(for source: String) -> [Input] {
        let shown = CredentialRedaction().redact(source)
        if let exact = inputs.first(where: { $0.source == source || $0.source == shown }) { return [exact] }
        return inputs.filter { Self.path(of: $0.source).hasSuffix("/" + source) }
    }

    /// `source` without the `;` parameters of its segments, its query and its fragment, when it
    /// is a web URL; as it is otherwise (an S3 key may hold any of those characters).
    private static func path(of source: String) -> Substring {
        let lowered = source.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return source[...] }
        let path = source.prefix { $0 != "?" && $0 != "#" }
        return path.split(separator: "/", omittingEmptySubsequences: false).map { $0.prefix { $0 != ";" } }.joined(separator: "/")[...]
    }
}
