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

    /// The top level's keys, in the order the references list them: where the inputs are, the
    /// stages, what the run does besides the outputs, and the outputs.
    static func topLevelOptions(processors: ProcessorRegistry) -> [Option] {
        inputOptions + stageOptions + runOptions + productOptions
            + [
                Option(
                    "inFlight", .integer(1...4096),
                    defaultRule: "the sum of the decompress, process and encode widths, plus the fetch width when inputs are downloaded",
                    help:
                        "inputs between the first stage and the last at once (default: the sum of the decompress, process and encode widths, plus the fetch width when inputs are downloaded)"
                ),
                Option(
                    "outputs", .array(.object(outputOptions(processors: processors)), minCount: 1), required: true,
                    help: "what to make from every input",
                    example: #"[{"name": "small", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]"#),
            ]
    }

    /// The file's version and name, and the inputs with their focal points.
    private static var inputOptions: [Option] {
        [
            .integer("version", in: version...version, required: true, help: "pipeline file format version"),
            Option(
                "name", .string(nonEmpty: true), default: JSONNode(plain: "pipeline"),
                help:
                    "a name for reports and logs, and for the journal of outputs made: a new name starts a new journal, so its first run makes every output again"
            ),
            Option(
                "inputs",
                .array(
                    .anyOf([
                        .string(nonEmpty: true),
                        .object([
                            Option(
                                "list", .string(nonEmpty: true), required: true,
                                help: "a file with one URL or path a line, for example \"urls.txt\"; blank lines and # comments are ignored"
                            )
                        ]),
                    ]), minCount: 1), required: true,
                help:
                    "input files, globs (*, ?, [abc], ** for any depth, {jpg,png} for each choice, nested as in {a,b{c,d}}), http(s) URLs and s3://bucket/key objects or globs, relative to this file's folder, or {\"list\": FILE}; for example \"photos/**/*.{jpg,png}\""
            ),
            Option(
                "focusPoints", .string(nonEmpty: true),
                help:
                    "a JSON file of focal points, {\"in/photo.jpg\": [0.8, 0.4]}: each input's point (fractions of its width and height as decoded: upright, or as stored when decompress.autorotate is false) for a cover crop at \"position\": \"focus\"; keys are input paths relative to this file's folder, or URLs; an input without a point is cropped about its centre",
                example: #""focus.json""#),
        ]
    }

    /// One section per stage, each with its settings' keys, and the limits across them.
    private static var stageOptions: [Option] {
        [
            Option("fetch", .object(FetchSettings.options), help: "reading inputs: local files, and HTTP(S) with libcurl"),
            Option(
                "cache", .object(CacheSettings.options),
                help: "the disk cache of fetched bytes, keyed by URL, revalidated with ETag and Last-Modified"),
            Option(
                "decompress", .object(DecompressSettings.options),
                help: "decoding each input once, shrunk on load to what its largest output needs"),
            Option(
                "process", .object([StageSettings.concurrencyOption("process", StageDefaults.processConcurrency, "one per two cores")]),
                help: "running each output's processor steps (resize, crop, blur, …)"),
            Option(
                "resize", .object([StageSettings.concurrencyOption("process", StageDefaults.processConcurrency, "one per two cores")]),
                help: "deprecated: the old name of \"process\", read with a warning until the next format version"),
            Option(
                "encode", .object([StageSettings.concurrencyOption("encode", StageDefaults.encodeConcurrency, "one per core")]),
                help: "encoding and writing each output"),
            Option(
                "limits", .object(LimitsSettings.options),
                help: "bounds on one input's work, whatever stage it is in (pipeline serve's requests too)"),
        ]
    }

    /// Which outputs a run makes and which inputs it accepts.
    private static var runOptions: [Option] {
        [
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
        ]
    }

    /// What the run gives besides the files, and where it keeps them: the manifest, the server,
    /// S3.
    private static var productOptions: [Option] {
        [
            Option(
                "manifest", .anyOf([.string(nonEmpty: true), .object(ManifestSettings.options)]),
                help:
                    "write one JSON manifest of the run for web pages: per input its size, per output and format the files with a srcset, and placeholders (pipeline schema --manifest); "
                    + "a path alone (\"site/images.json\") is short for {\"path\": \"site/images.json\"}"
            ),
            Option(
                "serve", .object(ServeSettings.options),
                help: "how pipeline serve answers HTTP requests for the outputs, made on the first request (see docs/serving.md)"
            ),
            Option(
                "s3",
                .object([
                    Option(
                        "profile", .string(nonEmpty: true),
                        help: "a profile in ~/.aws/credentials and ~/.aws/config (in place of AWS_PROFILE), for example \"images\""),
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
        ]
    }

    /// The keys of each entry of `outputs`.
    static func outputOptions(processors: ProcessorRegistry) -> [Option] {
        [
            Option(
                "name", .string(nonEmpty: true), required: true,
                help: "the output's name, unique in the file; also {output}, and the first part of its URLs when served, "
                    + "so not healthz, info or metrics, and without a /; for example \"small\""),
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
                    + "format; pipeline html gives them <source media> elements before the output's own, and pipeline serve "
                    + "answers them at ?art=W:H; the path needs {art}"),
            Option(
                "inputs", .array(.string(nonEmpty: true), minCount: 1),
                help: "make this output for these of the file's inputs only: globs with the rules of the top-level inputs, "
                    + "matched against the same paths relative to this file's folder (a URL input against its URL); "
                    + "for example [\"anim/*.gif\"]; an output whose globs match none of the inputs is an error"),
            Option(
                "placeholders", .array(.choice(PlaceholderKind.allCases.map(\.rawValue)), minCount: 1),
                help:
                    "placeholders for the manifest, computed from this output's smallest file at least 32 px wide (else its widest): lqip (a tiny WebP data URI), blurhash, thumbhash, dominantColor"
            ),
            Option("placeholderOptions", .object(PlaceholderSettings.options), help: "how the placeholders are made"),
            Option(
                "cacheControl", .string(nonEmpty: true),
                help: "S3 outputs: the objects' Cache-Control header, for example \"public, max-age=31536000, immutable\""),
            Option(
                "metadata", .stringMap,
                help:
                    "S3 outputs: user metadata stored with each object (x-amz-meta-NAME); names of lower-case letters, digits and -, not starting with pipeline-"
            ),
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
