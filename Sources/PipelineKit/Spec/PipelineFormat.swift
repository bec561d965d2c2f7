/// The shape of a pipeline file, version 1: the one definition that validation, the JSON
/// Schema and the documentation are all generated from.
public enum PipelineFormat {
    /// The format version this build reads: a file's `version`.
    public static let version = 1

    static func shape(processors: ProcessorRegistry) -> ValueShape {
        .object(topLevelOptions(processors: processors))
    }

    /// The keys of a pipeline file's top level, each with its shape, default and help: the
    /// definitions the validator checks and `pipeline schema` prints, for generated references.
    public static func options(processors: ProcessorRegistry) -> [Option] {
        topLevelOptions(processors: processors)
    }

    static func topLevelOptions(processors: ProcessorRegistry) -> [Option] {
        let concurrency = { (stage: String, value: Int, defaultRule: String?) in
            Option(
                "concurrency", .integer(1...64), default: JSONNode(plain: value),
                defaultRule: defaultRule.map { "\($0) this process may use" },
                help: "operations the \(stage) queue runs at once" + (defaultRule.map { " (default: \($0) this process may use)" } ?? ""))
        }
        return [
            .integer("version", in: version...version, required: true, help: "pipeline file format version"),
            Option("name", .string(nonEmpty: true), default: JSONNode(plain: "pipeline"), help: "a name for reports and logs"),
            Option(
                "inputs",
                .array(
                    .anyOf([
                        .string(nonEmpty: true),
                        .object([
                            Option(
                                "list", .string(nonEmpty: true), required: true,
                                help: "a file with one URL or path a line; blank lines and # comments are ignored")
                        ]),
                    ]), minCount: 1), required: true,
                help:
                    "input files, globs (*, ?, [abc], ** for any depth, {jpg,png} for each choice, nested as in {a,b{c,d}}), http(s) URLs and s3://bucket/key objects or globs, relative to this file's folder, or {\"list\": FILE}; for example \"photos/**/*.{jpg,png}\""
            ),
            Option(
                "focusPoints", .string(nonEmpty: true),
                help:
                    "a JSON file of focal points, {\"in/photo.jpg\": [0.8, 0.4]}: each input's point (fractions of its upright width and height) for a cover crop at \"position\": \"focus\"; keys are input paths relative to this file's folder, or URLs; an input without a point is cropped about its centre"
            ),
            Option(
                "fetch",
                .object([
                    concurrency("fetch", StageDefaults.fetchConcurrency, nil),
                    Option(
                        "maxBytes", .byteSize, default: JSONNode(plain: Units.text(bytes: StageDefaults.maxBytes)),
                        help: "largest input accepted, for example \"50MB\"; a download over it is stopped as soon as it is"),
                    Option(
                        "timeout", .duration, default: JSONNode(plain: Units.text(seconds: StageDefaults.fetchTimeout)),
                        help: "time limit of one HTTP transfer"),
                    Option(
                        "connectTimeout", .duration, default: JSONNode(plain: Units.text(seconds: StageDefaults.connectTimeout)),
                        help: "time limit to connect to a server"),
                    .integer(
                        "retries", in: 0...10, default: StageDefaults.retries,
                        help:
                            "retries after connection errors, timeouts, 429 and 5xx, with exponential backoff and jitter; Retry-After is honoured"
                    ),
                    Option(
                        "headers", .stringMap,
                        help:
                            "extra HTTP request headers, sent only to the input URL's own scheme, host and port; "
                            + "a whole value \"${NAME}\" is read from the environment variable NAME (\"$${NAME}\" for the text ${NAME})"),
                    .boolean(
                        "headersOnRedirect", default: false,
                        help: "send the headers also to the other hosts a redirect leads to; false keeps them for the input URL's origin"),
                    Option(
                        "userAgent", .string(nonEmpty: true), default: JSONNode(plain: StageDefaults.userAgent),
                        help: "the User-Agent header"),
                    .integer(
                        "maxRedirects", in: 0...20, default: StageDefaults.maxRedirects, help: "redirects followed (to http and https only)"
                    ),
                    .boolean(
                        "staleIfError", default: true,
                        help:
                            "when a remote input's server cannot be reached (refused, DNS, timeout) or answers 5xx after the retries, use its cached copy, however old, with one warning per run; false fails the input"
                    ),
                    Option(
                        "showQuery", .array(.string(nonEmpty: true), minCount: 0),
                        help:
                            "query parameters whose values may show in messages, reports, traces and manifests, by name (case matters); "
                            + "every other query value, the fragment, ;name=value path parameters and the user and password of a URL "
                            + "are shown as … (they are still sent)"),
                    Option(
                        "redactQuery", .array(.string(nonEmpty: true), minCount: 0),
                        help: "no longer has an effect: every query value is hidden unless showQuery names it; still accepted"),
                ]), help: "reading inputs: local files, and HTTP(S) with libcurl"),
            Option(
                "cache",
                .object([
                    concurrency("cache", StageDefaults.cacheConcurrency, nil),
                    .boolean("enabled", default: true, help: "keep fetched bytes between runs"),
                    Option(
                        "directory", .string(nonEmpty: true), default: JSONNode(plain: ".pipeline-cache"),
                        help: "the cache folder, relative to this file's folder"),
                    Option(
                        "maxSize", .byteSize, default: JSONNode(plain: Units.text(bytes: StageDefaults.cacheMaxSize)),
                        help: "the least recently used entries go beyond this size"),
                ]), help: "the disk cache of fetched bytes, keyed by URL, revalidated with ETag and Last-Modified"),
            Option(
                "decompress",
                .object([
                    concurrency("decompress", StageDefaults.decompressConcurrency, "one per core"),
                    .integer(
                        "maxPixels", in: 1...Int(Int32.max), default: StageDefaults.maxPixels,
                        help: "largest width × height × pages accepted, checked from the header before decoding"),
                    .boolean("autorotate", default: true, help: "turn images upright from their EXIF orientation"),
                    .choice(
                        "failOn", DecompressSettings.FailOn.self, default: .truncated,
                        help:
                            "how strict decoding is, as libvips' fail_on: none (decode what can be decoded), truncated (default: fail on truncated files), error (also on decoder errors) or warning (also on decoder warnings)"
                    ),
                    Option(
                        "timeout", .duration, default: JSONNode(plain: Units.text(seconds: DecompressSettings.defaultTimeout)),
                        help:
                            "longest one input's decoding may take before it is stopped and fails, for example \"30s\"; \"0s\" for no limit"
                    ),
                    .choice(
                        "animation", DecompressSettings.Animation.self, default: .keep,
                        help:
                            "animated GIF and WebP inputs: keep (default: GIF, WebP and AVIF outputs stay animated, every frame through the output's steps, "
                            + "with the input's frame delays and loop count (AVIF as an image sequence); other formats get the first frame) or first (the first frame for every output)"
                    ),
                    .integer(
                        "maxFrames", in: 1...1_000_000, default: DecompressSettings.defaultMaxFrames,
                        help:
                            "with animation keep, most frames an animated GIF or WebP may have, checked from the header before decoding; "
                            + "maxPixels counts every frame"),
                    .boolean(
                        "fastShrinkOnLoad", default: true,
                        help:
                            "JPEG: shrink while decoding by the whole factor the outputs allow (faster); false leaves a factor of two for resampling (the finest detail)"
                    ),
                    Option(
                        "allowUntrusted", .array(.choice(DecompressSettings.UntrustedFormat.allCases.map(\.rawValue)), minCount: 0),
                        default: JSONNode(plain: [String]()),
                        help:
                            "formats whose libvips loaders are not made for untrusted files, read only when named here: svg (librsvg), pdf (poppler); other inputs of them are refused"
                    ),
                ]), help: "decoding each input once, shrunk on load to what its largest output needs"),
            Option(
                "process", .object([concurrency("process", StageDefaults.processConcurrency, "one per two cores")]),
                help: "running each output's processor steps (resize, crop, blur, …)"),
            Option(
                "resize", .object([concurrency("process", StageDefaults.processConcurrency, "one per two cores")]),
                help: "deprecated: the old name of \"process\", read with a warning until the next format version"),
            Option(
                "encode", .object([concurrency("encode", StageDefaults.encodeConcurrency, "one per core")]),
                help: "encoding and writing each output"),
            Option(
                "limits",
                .object([
                    Option(
                        "itemTimeout", .duration, default: JSONNode(plain: Units.text(seconds: LimitsSettings.defaultItemTimeout)),
                        help:
                            "longest one input may take from the start of its decode to the commit of its last output, waits between "
                            + "its stages included; past it the work is stopped inside libvips, its temporary files removed, and the "
                            + "input fails while the others go on; \"0s\" for no limit")
                ]), help: "bounds on one input's work, whatever stage it is in (pipeline serve's requests too)"),
            .boolean(
                "incremental", default: true,
                help:
                    "skip outputs made by an earlier run from the same input and settings and still in place (pipeline run --force makes them all)"
            ),
            .boolean(
                "allowEmpty", default: false,
                help:
                    "whether a run whose inputs match no file is fine; by default it is an error (exit status 2), naming each input and the folder it looked in"
            ),
            .boolean(
                "caseInsensitive", default: false,
                help:
                    "whether input globs, here and in lists, match names whatever their case: \"*.jpg\" then also matches PHOTO.JPG; the folder before a glob's first wildcard is opened as written"
            ),
            Option(
                "manifest",
                .anyOf([
                    .string(nonEmpty: true),
                    .object([
                        Option(
                            "path", .string(nonEmpty: true), required: true,
                            help: "where to write the manifest (JSON), relative to this file's folder, for example \"site/images.json\""),
                        Option(
                            "urlPrefix", .string(nonEmpty: false), default: JSONNode(plain: ""),
                            help: "put before each file's path relative to the manifest's folder to make its URL, for example \"/img/\""),
                    ]),
                ]),
                help:
                    "write one JSON manifest of the run for web pages: per input its size, per output and format the files with a srcset, and placeholders (pipeline schema --manifest); "
                    + "a path alone (\"site/images.json\") is short for {\"path\": \"site/images.json\"}"
            ),
            Option(
                "serve",
                .object([
                    Option(
                        "cacheControl", .string(nonEmpty: true),
                        help:
                            "the Cache-Control header of every file pipeline serve answers with, for example \"public, max-age=31536000, immutable\""
                    ),
                    .integer(
                        "maxConnections", in: 1...1_000_000, default: ServeSettings.defaultMaxConnections,
                        help: "most connections pipeline serve keeps open at once; more wait to be accepted"),
                    .integer(
                        "maxQueue", in: 0...1_000_000, default: ServeSettings.defaultMaxQueue,
                        help:
                            "inputs not made yet that may wait for pipeline serve's runs besides those being made (inFlight of them); "
                            + "past it a request for another gets 503 with Retry-After"),
                    .integer(
                        "drainTimeout", in: 0...3600, default: ServeSettings.defaultDrainTimeout,
                        help:
                            "seconds pipeline serve gives the requests in flight to be answered after SIGTERM; past it, the runs "
                            + "are cancelled, their temporary files removed, and the exit is 1"),
                    .boolean(
                        "clientHints", default: false,
                        help:
                            "answer with Accept-CH: Sec-CH-Width, Sec-CH-DPR, Width, DPR, and pick the width of a request without ?width= "
                            + "from its Sec-CH-Width (or Width): the smallest of the output's widths at least that wide, else the widest"),
                    Option(
                        "key", .string(nonEmpty: true),
                        help:
                            "sign URLs as imgproxy does: the HMAC-SHA256 key, in hex; with salt, every path must start with its signature "
                            + "(/SIGNATURE/output/input), else 403; \"${NAME}\" reads it from the environment variable NAME"),
                    Option(
                        "salt", .string(nonEmpty: true),
                        help:
                            "the salt of signed URLs, in hex, put before the path when signing; \"${NAME}\" reads it from the environment variable NAME"
                    ),
                    Option(
                        "fallback", .string(nonEmpty: true),
                        help:
                            "an image file, relative to this file's folder, answered (200, X-Pipeline-Fallback: 1) in place of an input "
                            + "that cannot be read as an image or made into the output, as imgproxy's fallback image"),
                ]),
                help: "how pipeline serve answers HTTP requests for the outputs, made on the first request (see docs/serving.md)"
            ),
            Option(
                "s3",
                .object([
                    Option(
                        "profile", .string(nonEmpty: true),
                        help: "a profile in ~/.aws/credentials and ~/.aws/config (in place of AWS_PROFILE)"),
                    Option("region", .string(nonEmpty: true), help: "the region (in place of AWS_REGION), for example \"eu-west-1\""),
                    Option(
                        "endpoint", .string(nonEmpty: true),
                        help:
                            "an S3-compatible server, for example \"http://127.0.0.1:9000\" (in place of AWS_ENDPOINT_URL_S3), addressed path-style"
                    ),
                ]),
                help:
                    "S3-compatible storage for s3:// inputs and outputs; keys and tokens come from the environment or ~/.aws, never from this file"
            ),
            Option(
                "inFlight", .integer(1...4096),
                defaultRule: "the sum of the decompress, process and encode widths, plus the fetch width when inputs are downloaded",
                help:
                    "inputs between the first stage and the last at once (default: the sum of the decompress, process and encode widths, plus the fetch width when inputs are downloaded)"
            ),
            Option(
                "outputs", .array(.object(outputOptions(processors: processors)), minCount: 1), required: true,
                help: "what to make from every input"),
        ]
    }

    static func outputOptions(processors: ProcessorRegistry) -> [Option] {
        // The placeholders' defaults are their settings' own.
        let placeholders = PlaceholderSettings()
        return [
            Option(
                "name", .string(nonEmpty: true), required: true,
                help: "the output's name, unique in the file; also {output}; for example \"small\""),
            Option(
                "steps", .array(.singleKey(variants: processors.variants), minCount: 0),
                help: "processor steps, in order: each an object with one key naming the processor"),
            Option("encode", EncoderSettings.shape, help: "the encoder: format and its options (give encode, formats or tiles)"),
            Option(
                "widths", .array(.anyOf([.integer(1...100_000), .choice(["original"])]), minCount: 1),
                help: "make the output at each of these widths (and \"original\": the image's own width), each the width of the "
                    + "output's resize step (one with fit inside when it has none); widths above the image's are not made "
                    + "unless the resize says \"withoutEnlargement\": false, and the image's own width stands in for them once; "
                    + "several widths need {width} in the path"),
            Option(
                "formats", .array(.anyOf([.choice(EncoderSettings.Format.allCases.map(\.rawValue)), EncoderSettings.shape]), minCount: 1),
                help: "make the output in each of these encodings (each shaped like encode, or a format's name alone for its "
                    + "defaults: [\"avif\", \"webp\"] is [{\"format\": \"avif\"}, {\"format\": \"webp\"}]), instead of encode; "
                    + "several formats need {format} in the path"),
            Option(
                "art", DefinitionBuilder.artShape,
                help: "art direction: other crops for the screens a media query names, each at widths of its own in every "
                    + "format; pipeline html gives them <source media> elements before the output's own; the path needs {art}"),
            Option(
                "inputs", .array(.string(nonEmpty: true), minCount: 1),
                help: "make this output for these of the file's inputs only: globs with the rules of the top-level inputs, "
                    + "matched against the same paths relative to this file's folder (a URL input against its URL); "
                    + "for example [\"anim/*.gif\"]; an output whose globs match none of the inputs is an error"),
            Option(
                "placeholders", .array(.choice(PlaceholderKind.allCases.map(\.rawValue)), minCount: 1),
                help:
                    "placeholders for the manifest, computed from this output's smallest file: lqip (a tiny WebP data URI), blurhash, thumbhash, dominantColor"
            ),
            Option(
                "placeholderOptions",
                .object([
                    .integer(
                        "lqipWidth", in: PlaceholderSettings.lqipWidthRange, default: placeholders.lqipWidth,
                        help: "the LQIP's largest width in pixels"),
                    .integer(
                        "lqipQuality", in: PlaceholderSettings.lqipQualityRange, default: placeholders.lqipQuality,
                        help: "the LQIP's WebP quality"),
                    .integer(
                        "blurhashX", in: PlaceholderSettings.blurhashComponentRange, default: placeholders.blurhashXComponents,
                        help: "BlurHash components across"),
                    .integer(
                        "blurhashY", in: PlaceholderSettings.blurhashComponentRange, default: placeholders.blurhashYComponents,
                        help: "BlurHash components down"),
                ]), help: "how the placeholders are made"),
            Option(
                "cacheControl", .string(nonEmpty: true),
                help: "S3 outputs: the objects' Cache-Control header, for example \"public, max-age=31536000, immutable\""),
            Option(
                "metadata", .stringMap,
                help: "S3 outputs: user metadata stored with each object (x-amz-meta-NAME); names of letters, digits and -"),
            Option(
                "path", .pathTemplate, required: true,
                help: "where to write, relative to this file's folder, or s3://bucket/key; placeholders: "
                    + PathTemplate.Placeholder.allCases.map { "{\($0.rawValue)} \($0.help)" }.joined(separator: ", ")),
            Option(
                "tiles", TileSettings.shape,
                help: "write a tile pyramid for zooming viewers (DeepZoom, IIIF, Zoomify, Google Maps) in place of one image, "
                    + "instead of encode; the path names the .dzi file (dz) or the pyramid's folder (the other layouts)"),
        ]
    }
}
