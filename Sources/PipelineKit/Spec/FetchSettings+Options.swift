/// The `fetch` section's keys, with their defaults: the schema, the reference docs and the reader
/// all take them from here.
extension FetchSettings {
    /// The keys of the `fetch` section.
    static var options: [Option] {
        [
            StageSettings.concurrencyOption("fetch", StageDefaults.fetchConcurrency, nil),
            Option(
                "maxBytes", .byteSize, default: JSONNode(plain: Units.text(bytes: StageDefaults.maxBytes)),
                help: "largest input accepted, for example \"50MB\"; a download over it is stopped as soon as it is"),
            Option(
                "timeout", .duration, default: JSONNode(plain: Units.text(seconds: StageDefaults.fetchTimeout)),
                help: "time limit of one HTTP transfer, redirects included; more than 0"),
            Option(
                "connectTimeout", .duration, default: JSONNode(plain: Units.text(seconds: StageDefaults.connectTimeout)),
                help: "time limit to connect to a server; more than 0"),
            .integer(
                "retries", in: 0...10, default: StageDefaults.retries,
                help:
                    "retries after connection errors, timeouts, 429 and 5xx, with exponential backoff and jitter; Retry-After is honoured up to 60 s, and one asking for longer fails at once"
            ),
            Option(
                "headers", .stringMap,
                help:
                    "extra HTTP request headers, sent only to the input URL's own scheme, host and port (never with a composite overlay); "
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
        ]
    }
}
