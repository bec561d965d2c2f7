import Foundation

/// A checked pipeline file: what to read, how each stage runs, and what to make of each input.
///
/// Only the builder that checked the file makes one, so what it checked stays true: each
/// property is read-only. A different definition comes from a different file (or JSON text).
public struct PipelineDefinition: Sendable {
    /// The file's `name`, for reports and logs (`pipeline` when it gives none).
    public let name: String
    /// The folder relative paths resolve against: the pipeline file's folder.
    public let baseDirectory: URL
    /// Files, globs, URLs and list files, in the order the file lists them.
    public let inputs: [InputEntry]
    /// The `fetch` section: how inputs are read and downloaded.
    public let fetch: FetchSettings
    /// The `cache` section: the disk cache of fetched bytes.
    public let cache: CacheSettings
    /// The `decompress` section: how each input is decoded.
    public let decompress: DecompressSettings
    /// The `process` stage: each output's steps.
    public let process: StageSettings
    /// The `encode` stage: encoding and writing each output.
    public let encode: StageSettings
    /// The file's `inFlight`, or nil when it says nothing and the default applies.
    public let inFlightSetting: Int?
    /// Whether outputs made by an earlier run, and still up to date, are skipped.
    public let incremental: Bool
    /// Whether a run whose inputs name no file is fine (else it is an error before the run).
    public let allowEmpty: Bool
    /// Whether input globs match names whatever the case of their letters (`*.jpg` finds `A.JPG`).
    public let caseInsensitive: Bool
    /// What to make from every input, one definition per width × format of each output.
    public let outputs: [OutputDefinition]
    /// Where the run's manifest goes, when the file asks for one.
    public let manifest: ManifestSettings?
    /// What the file says that still works but should change (an old key), for people.
    public let warnings: [String]
    /// The `s3` section: profile, region and endpoint for `s3://` inputs and outputs.
    public let s3: S3Settings
    /// The `serve` section: how `pipeline serve` answers.
    public var serve = ServeSettings()
    /// The pipeline file, when the definition was read from one: a run reads it, so nothing the
    /// run writes may land on it.
    public internal(set) var sourceFile: URL?
    /// The `limits` section: bounds on one input's work.
    public var limits = LimitsSettings()
    /// The `focusPoints` file's points, as read when the definition was: what
    /// `"position": "focus"` keeps of each input. nil when the file names none.
    public var focusPoints: FocusPoints?
    /// Where each entry of `inputs` is written in the file, for messages; empty for a
    /// definition not read from JSON text.
    var inputLocations: [SourceLocation] = []
    /// Where the manifest's path is written in the file, for messages.
    var manifestLocation: SourceLocation?

    /// Where the entry `inputs[index]` is written in the file, when it was read from one.
    func inputLocation(_ index: Int) -> SourceLocation? {
        inputLocations.indices.contains(index) ? inputLocations[index] : nil
    }

    /// How many inputs may be between the first stage and the last at once: the file's
    /// `inFlight`, or by default the sum of the decompress, process and encode widths (a run
    /// of remote inputs adds the fetch lanes: `inFlight(fetchingRemoteInputs:)`).
    public var inFlight: Int {
        inFlightSetting
            ?? StageDefaults.inFlight(
                decompress: decompress.concurrency, process: process.concurrency,
                encode: encode.concurrency)
    }

    /// The in-flight window of a run: `inFlight`, plus the fetch lanes when the run downloads
    /// inputs and the file does not set `inFlight`. Downloads wait on the network, not on the
    /// cores, so without the fetch lanes they would wait for the window; for local files, which
    /// the fetch stage only checks, more in flight would only raise the peak of memory.
    public func inFlight(fetchingRemoteInputs: Bool) -> Int {
        inFlightSetting != nil || !fetchingRemoteInputs ? inFlight : inFlight + fetch.concurrency
    }

    /// The local files beside its inputs that the outputs are made with: the focus file, the
    /// images steps read (overlays) and the ICC profiles outputs embed, as absolute paths.
    public var filesOutputsAreMadeWith: [String] {
        let resources = outputs.flatMap { $0.steps.flatMap(\.resources) }.filter(\.isFileURL).map(\.path)
        return (focusPoints.map { [$0.file.path] } ?? []) + resources + outputs.compactMap(\.encoder.iccProfileFile)
    }
}

/// The `manifest` section: one JSON file describing the run's outputs for web pages.
public struct ManifestSettings: Sendable, Equatable {
    /// The manifest file, absolute.
    public var file: URL
    /// Put before a file's path relative to `urlRoot` to make its URL.
    public var urlPrefix: String
    /// The folder `urlPrefix` serves, absolute: by default the manifest's.
    public var urlRoot: URL

    /// The section's settings: `file` and `urlRoot` absolute (`urlRoot` by default the manifest's folder).
    public init(file: URL, urlPrefix: String, urlRoot: URL? = nil) {
        self.file = file
        self.urlPrefix = urlPrefix
        self.urlRoot = urlRoot ?? file.deletingLastPathComponent()
    }

    /// The settings a shard writes with: its own file beside the manifest
    /// (`manifest.shard-2-of-4.json`), since shards run apart and each knows only its inputs.
    public func forShard(_ shard: Shard?) -> ManifestSettings {
        guard let shard else { return self }
        let stem = file.deletingPathExtension().lastPathComponent
        let suffix = file.pathExtension.isEmpty ? "" : "." + file.pathExtension
        let name = "\(stem).shard-\(shard.index)-of-\(shard.count)\(suffix)"
        return ManifestSettings(file: file.deletingLastPathComponent().appendingPathComponent(name), urlPrefix: urlPrefix, urlRoot: urlRoot)
    }
}

/// One variant made from every input: a chain of processors, an encoder and a path.
public struct OutputDefinition: Sendable {
    /// The output's name, unique in the file; also `{output}`.
    public var name: String
    /// The processor steps, in order.
    public var steps: [any ImageProcessing]
    /// How the output is encoded.
    public var encoder: EncoderSettings
    /// Where each input's file goes.
    public var path: PathTemplate
    /// Where the path stood in the pipeline file, for errors found when planning.
    var pathLocation: SourceLocation?
    /// The output's index in the pipeline file's `outputs`, for errors found when planning: an
    /// output with `widths` or `formats` is several definitions, so their index is not it.
    var fileIndex: Int?
    /// Placeholders the manifest gives for this output, computed from its smallest file.
    public var placeholders: [PlaceholderKind] = []
    /// How the placeholders are made.
    public var placeholderSettings = PlaceholderSettings()
    /// S3 outputs: the objects' `Cache-Control`, or nil.
    public var cacheControl: String? = nil
    /// S3 outputs: user metadata stored with each object, by name (without `x-amz-meta-`).
    public var metadata: [String: String] = [:]
    /// Which width × format combination this is, when the output lists `widths` or `formats`.
    public var variant: ResponsiveVariant? = nil
    /// The output's art direction entries (`art`): every variant of the output carries them all,
    /// and `variant.art` says which one it is a crop for.
    public var art: [ArtDirection] = []
    /// A tile pyramid output: its layout and tiles, written in place of one image file
    /// (`encoder` then holds the tiles' format and quality); nil for an image file.
    public var tiles: TileSettings? = nil
    /// The inputs this output is made for, when the file chooses them (`"inputs"`); nil for every input.
    public var inputSubset: InputSubset? = nil

    /// An output with no placeholders, S3 settings or variant.
    public init(name: String, steps: [any ImageProcessing], encoder: EncoderSettings, path: PathTemplate) {
        self.name = name
        self.steps = steps
        self.encoder = encoder
        self.path = path
    }
}

/// One entry of `inputs`.
public enum InputEntry: Sendable, Equatable {
    /// A file, a glob, an http(s) URL, or an `s3://` object or glob.
    case pattern(String)
    /// A file listing one URL or path a line.
    case list(String)
}

/// Settings every stage has.
public struct StageSettings: Sendable, Equatable {
    /// How many operations the stage's queue runs at once.
    public var concurrency: Int
}

/// Settings of the `fetch` stage (for local files: reading them).
public struct FetchSettings: Sendable, Equatable {
    /// Downloads (or local reads) at once.
    public var concurrency: Int
    /// Inputs larger than this many bytes fail; downloads stop as soon as they pass it.
    public var maxBytes: Int64
    /// Seconds one HTTP transfer may take.
    public var timeout: Double
    /// Seconds connecting to a server may take.
    public var connectTimeout: Double
    /// Retries after connection errors, timeouts, 429 and 5xx.
    public var retries: Int
    /// Extra HTTP request headers for unsigned requests, to the input URL's origin (and others
    /// with `headersOnRedirect`), with the environment's values for `${NAME}`.
    public var headers: [String: String]
    /// The User-Agent header.
    public var userAgent: String
    /// Redirects followed (to http and https only).
    public var maxRedirects: Int
    /// Serve the cached copy of a remote input when its origin cannot be reached or answers
    /// 5xx after the retries, rather than failing it.
    public var staleIfError: Bool = true
    /// Query parameters whose values may show where URLs are shown (`CredentialRedaction`).
    public var showQuery: [String] = []
    /// Whether `headers` go also to the other origins a redirect leads to.
    public var headersOnRedirect = false

    /// How URLs of this run are shown: credentials in them hidden.
    public var redaction: CredentialRedaction { CredentialRedaction(showQuery: showQuery) }
}

/// Settings of the `cache` stage: the disk cache of fetched bytes.
public struct CacheSettings: Sendable, Equatable {
    /// Cache reads and writes at once.
    public var concurrency: Int
    /// Whether fetched bytes are kept between runs.
    public var enabled: Bool
    /// The cache folder, absolute.
    public var directory: URL
    /// The size, in bytes, beyond which the least recently used entries go.
    public var maxSize: Int64

    /// The journal of outputs made, for incremental runs of the pipeline named `name`; it lives
    /// beside the cache, one file per pipeline.
    func journalFile(pipeline name: String, baseDirectory: URL) -> URL {
        let key = FNV1a.hex(baseDirectory.path + "\n" + name)
        return directory.appendingPathComponent("journal-\(key).jsonl")
    }
}

/// Settings of the `decompress` stage.
public struct DecompressSettings: Sendable, Equatable {
    /// How strict decoding is, as libvips' `fail_on` defines it.
    public enum FailOn: String, CaseIterable, Sendable {
        /// Decode whatever can be decoded.
        case none
        /// Fail on truncated files (the default: a truncated photo is a broken upload).
        case truncated
        /// Fail on truncation and on decoder errors.
        case error
        /// Fail on anything the decoder warns about.
        case warning
    }

    /// Decodes at once.
    public var concurrency: Int
    /// Inputs with more pixels than this (width × height × pages, read from the header) fail
    /// before decoding.
    public var maxPixels: Int
    /// Turn images upright as their EXIF orientation says.
    public var autorotate: Bool
    /// How strict decoding is.
    public var failOn: FailOn
    /// Let JPEG decoding shrink by the whole factor the outputs allow (as sharp does by
    /// default), rather than leaving a factor of two for resampling (as vips_thumbnail does).
    public var fastShrinkOnLoad: Bool
    /// What an animated GIF or WebP becomes.
    public var animation: Animation = .keep
    /// With `animation` keep, animated GIFs and WebPs with more frames than this (read from the
    /// header) fail before decoding: a frame bomb is refused as a pixel bomb is.
    public var maxFrames: Int = DecompressSettings.defaultMaxFrames

    /// What an animated input becomes.
    public enum Animation: String, CaseIterable, Sendable {
        /// Its first frame, for every output.
        case first
        /// Every frame, for GIF, WebP and AVIF outputs (animated, with the input's frame delays and
        /// loop count); other formats get the first frame.
        case keep
    }
    /// Seconds one input's decoding may take before it is stopped and fails; 0 for no limit.
    public var timeout: Double
    /// Formats read by loaders libvips marks untrusted that the file lets through; inputs of
    /// the others are refused.
    public var allowUntrusted: Set<UntrustedFormat> = []

    /// A format whose libvips loader is marked untrusted (not made for hostile files), which a
    /// pipeline file may opt into with `decompress.allowUntrusted`.
    public enum UntrustedFormat: String, CaseIterable, Sendable {
        /// SVG, rendered by librsvg.
        case svg
        /// PDF, rendered by poppler.
        case pdf
    }

    /// A minute: far longer than decoding the largest image the default `maxPixels` lets
    /// through takes on one core (Benchmarks/RESULTS.md), so it stops only
    /// an input that would otherwise hold a decode slot for good.
    public static let defaultTimeout: Double = 60

    /// More frames than animations made to be watched have, and few enough that a bomb of tiny
    /// frames is refused from its header.
    public static let defaultMaxFrames = 1000

    /// Decompress settings; the optional ones at the pipeline file's defaults.
    public init(
        concurrency: Int, maxPixels: Int, autorotate: Bool, failOn: FailOn, fastShrinkOnLoad: Bool = true,
        timeout: Double = DecompressSettings.defaultTimeout, animation: Animation = .keep,
        allowUntrusted: Set<UntrustedFormat> = [], maxFrames: Int = DecompressSettings.defaultMaxFrames
    ) {
        self.concurrency = concurrency
        self.maxPixels = maxPixels
        self.autorotate = autorotate
        self.failOn = failOn
        self.fastShrinkOnLoad = fastShrinkOnLoad
        self.timeout = timeout
        self.animation = animation
        self.allowUntrusted = allowUntrusted
        self.maxFrames = maxFrames
    }
}

/// Stage widths and bounds used when the pipeline file says nothing: the pipeline file's
/// declared options (`PipelineFormat`) take their defaults from here, and so does
/// `CurlDataLoader` when it is made without a file.
///
/// The widths follow the cores the process may use (`AvailableCores`), with one libvips thread
/// per image: a decode and an encode lane per core, so that whichever of the two a job spends
/// its time in (decoding for thumbnails, AV1 encoding for a responsive set) keeps every core
/// busy. Measured on a 2-core machine with `Benchmarks/run.sh` (see Benchmarks/RESULTS.md).
public enum StageDefaults {
    /// Downloads at once: they wait on the network, not on the cores.
    public static let fetchConcurrency = 4
    /// Cache reads and writes at once.
    public static let cacheConcurrency = 2
    /// One per core.
    public static let decompressConcurrency = AvailableCores.count
    /// One per two cores: the process stage renders each output's steps into memory (`StepChain`),
    /// from an image already shrunk on load, which is lighter work than decoding or encoding.
    public static let processConcurrency = max(1, AvailableCores.count / 2)
    /// One per core.
    public static let encodeConcurrency = AvailableCores.count
    /// The largest input accepted (`fetch.maxBytes`).
    public static let maxBytes: Int64 = 100_000_000
    /// Seconds one HTTP transfer may take (`fetch.timeout`).
    public static let fetchTimeout: Double = 30
    /// Seconds connecting to a server may take (`fetch.connectTimeout`).
    public static let connectTimeout: Double = 10
    /// Retries after a transient failure (`fetch.retries`).
    public static let retries = 2
    /// Redirects followed (`fetch.maxRedirects`).
    public static let maxRedirects = 5
    /// The User-Agent header (`fetch.userAgent`).
    public static let userAgent = "pipeline/\(PipelineKitInfo.version)"
    /// The size the disk cache is kept under (`cache.maxSize`).
    public static let cacheMaxSize: Int64 = 1_000_000_000
    /// sharp's default limit (0x3FFF × 0x3FFF), enough for any camera photo.
    public static let maxPixels = 268_402_689

    /// Enough items in flight to keep every stage busy, and no more: memory stays flat (a run
    /// of remote inputs adds the fetch lanes: `PipelineDefinition.inFlight(fetchingRemoteInputs:)`).
    static func inFlight(decompress: Int, process: Int, encode: Int) -> Int {
        decompress + process + encode
    }
}
