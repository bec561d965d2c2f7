/// The `cache` section's keys, with their defaults: the schema, the reference docs and the reader
/// all take them from here.
extension CacheSettings {
    /// The keys of the `cache` section.
    static var options: [Option] {
        [
            StageSettings.concurrencyOption("cache", StageDefaults.cacheConcurrency, nil),
            .boolean("enabled", default: true, help: "keep fetched bytes between runs"),
            Option(
                "directory", .string(nonEmpty: true), default: JSONNode(plain: ".pipeline-cache"),
                help: "the cache folder, relative to this file's folder"),
            Option(
                "maxSize", .byteSize, default: JSONNode(plain: Units.text(bytes: StageDefaults.cacheMaxSize)),
                help: "the least recently used entries go beyond this size"),
        ]
    }
}
