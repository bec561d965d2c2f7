/// The `serve` section's keys, with their defaults: the schema, the reference docs and the reader
/// all take them from here.
extension ServeSettings {
    /// The keys of the `serve` section.
    static var options: [Option] {
        [
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
                    "runs (and /info reads) that may wait in pipeline serve besides those going (inFlight of them); "
                    + "past it a request for another gets 503 with Retry-After"),
            Option(
                "drainTimeout", .duration, default: JSONNode(plain: Units.text(seconds: ServeSettings.defaultDrainTimeout)),
                help:
                    "how long pipeline serve gives the requests in flight to be answered after SIGTERM, at most 1h; past it, the runs "
                    + "are cancelled, their temporary files removed, and the exit is 1"),
            Option(
                "timeout", .duration, default: JSONNode(plain: Units.text(seconds: ServeSettings.defaultTimeout)),
                help:
                    "how long a request for a file waits for it to be made (or read back from its bucket), or for an /info read, "
                    + "more than 0 and at most 1h; past it, 503 with Retry-After, while its run goes on to put the file where a later "
                    + "request finds it"),
            .boolean(
                "clientHints", default: false,
                help:
                    "answer with Accept-CH: Sec-CH-Width, Sec-CH-DPR, Width, DPR, and pick the width of a request without ?width= "
                    + "from its Sec-CH-Width (or Width): the smallest of the output's widths at least that wide, else the widest"),
            .boolean(
                "makeAll", default: false,
                help:
                    "make every output, width and format of an input on the first request for any of them, as a batch run does, "
                    + "rather than only the file the request names"),
            Option(
                "key", .string(nonEmpty: true),
                help:
                    "sign URLs as imgproxy does: the HMAC-SHA256 key, in hex; with salt, every path must start with its signature "
                    + "(/SIGNATURE/output/input), else 403; \"${NAME}\" reads it from the environment variable NAME",
                example: #""943b421c9eb07c83""#),
            Option(
                "salt", .string(nonEmpty: true),
                help:
                    "the salt of signed URLs, in hex, put before the path when signing; \"${NAME}\" reads it from the environment variable NAME",
                example: #""520f986b998545b4""#),
            Option(
                "fallback", .string(nonEmpty: true),
                help:
                    "an image file, relative to this file's folder, answered (200, X-Pipeline-Fallback: 1) in place of an input "
                    + "that cannot be read as an image or made into the output, as imgproxy's fallback image",
                example: #""fallback.png""#),
        ]
    }
}
