/// The `decompress` section's keys, with their defaults: the schema, the reference docs and the reader
/// all take them from here.
extension DecompressSettings {
    /// The keys of the `decompress` section.
    static var options: [Option] {
        [
            StageSettings.concurrencyOption("decompress", StageDefaults.decompressConcurrency, "one per core"),
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
                    "animated GIF, WebP and AVIF inputs: keep (default: GIF, WebP and AVIF outputs stay animated, every frame through the output's steps, "
                    + "with the input's frame delays and loop count (AVIF as an image sequence); other formats get the first frame) or first (the first frame for every output)"
            ),
            .integer(
                "maxFrames", in: 1...1_000_000, default: DecompressSettings.defaultMaxFrames,
                help:
                    "with animation keep, most frames an animated GIF, WebP or AVIF may have, checked from the header before decoding; "
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
        ]
    }
}
