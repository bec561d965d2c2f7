/// How placeholders are made: the size and quality of the LQIP and the BlurHash components.
///
/// Values are checked when placeholders are computed, so that the error can name the setting.
public struct PlaceholderSettings: Hashable, Sendable {
    /// The widest the LQIP may be, in pixels; narrower images keep their width.
    public var lqipWidth: Int
    /// The WebP quality of the LQIP, 1 to 100.
    public var lqipQuality: Int
    /// BlurHash components across, 1 to 9.
    public var blurhashXComponents: Int
    /// BlurHash components down, 1 to 9.
    public var blurhashYComponents: Int

    /// The widths an LQIP may have: a data URI is inlined in every page that shows the image.
    public static let lqipWidthRange = 1...64
    /// The qualities WebP takes.
    public static let lqipQualityRange = 1...100
    /// The component counts BlurHash can encode on each axis (one base-83 digit holds both).
    public static let blurhashComponentRange = 1...9

    /// Settings with the defaults: a 16 px wide LQIP at WebP quality 40, BlurHash 4×3.
    public init(lqipWidth: Int = 16, lqipQuality: Int = 40, blurhashXComponents: Int = 4, blurhashYComponents: Int = 3) {
        self.lqipWidth = lqipWidth
        self.lqipQuality = lqipQuality
        self.blurhashXComponents = blurhashXComponents
        self.blurhashYComponents = blurhashYComponents
    }

    /// Throws the first setting that `kind` uses and that is out of its range.
    public func validate(for kind: PlaceholderKind) throws(PlaceholderError) {
        switch kind {
        case .lqip:
            try Self.check("lqipWidth", lqipWidth, in: Self.lqipWidthRange, for: kind)
            try Self.check("lqipQuality", lqipQuality, in: Self.lqipQualityRange, for: kind)
        case .blurhash:
            try Self.check("blurhashXComponents", blurhashXComponents, in: Self.blurhashComponentRange, for: kind)
            try Self.check("blurhashYComponents", blurhashYComponents, in: Self.blurhashComponentRange, for: kind)
        case .thumbhash, .dominantColor:
            break
        }
    }

    /// What `kinds` are computed with, as text for a manifest's `placeholdersFrom`: the kinds in
    /// a fixed order, each with the settings it uses, so that placeholders are kept only for the
    /// list and settings they were made with. It ends with `transparent`, which every list
    /// records: placeholders made without it are made again.
    public func recipe(for kinds: [PlaceholderKind]) -> String {
        let ordered = PlaceholderKind.allCases.filter(kinds.contains)
        guard !ordered.isEmpty else { return "" }
        let settings = ordered.map { kind in
            switch kind {
            case .lqip: "lqip:\(lqipWidth)w:q\(lqipQuality)"
            case .blurhash: "blurhash:\(blurhashXComponents)x\(blurhashYComponents)"
            case .thumbhash: kind.rawValue
            // Of the pixels seen: a colour made when wholly transparent pixels counted is made again.
            case .dominantColor: "dominantColor:seen"
            }
        }
        return (settings + ["transparent"]).joined(separator: ",")
    }

    static func check(_ name: String, _ value: Int, in range: ClosedRange<Int>, for kind: PlaceholderKind) throws(PlaceholderError) {
        guard range.contains(value) else {
            throw PlaceholderError(kind, .settingOutOfRange(name: name, value: value, allowed: range))
        }
    }
}
