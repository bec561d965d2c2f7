/// The `placeholderOptions` object's keys, with their defaults: the schema, the reference docs and
/// the reader all take them from here.
extension PlaceholderSettings {
    /// The keys of an output's `placeholderOptions`.
    static var options: [Option] {
        // The defaults are the settings' own.
        let defaults = PlaceholderSettings()
        return [
            .integer(
                "lqipWidth", in: PlaceholderSettings.lqipWidthRange, default: defaults.lqipWidth,
                help: "the LQIP's largest width in pixels"),
            .integer(
                "lqipQuality", in: PlaceholderSettings.lqipQualityRange, default: defaults.lqipQuality,
                help: "the LQIP's WebP quality"),
            .integer(
                "blurhashX", in: PlaceholderSettings.blurhashComponentRange, default: defaults.blurhashXComponents,
                help: "BlurHash components across"),
            .integer(
                "blurhashY", in: PlaceholderSettings.blurhashComponentRange, default: defaults.blurhashYComponents,
                help: "BlurHash components down"),
        ]
    }
}
