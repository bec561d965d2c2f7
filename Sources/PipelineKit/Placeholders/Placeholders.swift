import Vips

/// The placeholders of one image, as a manifest holds them: each field is nil unless asked for.
///
/// Encodes to JSON with the keys `lqip`, `blurhash`, `thumbhash`, `dominantColor` and
/// `transparent`, leaving out those not computed.
public struct Placeholders: Codable, Hashable, Sendable {
    /// `data:image/webp;base64,…`: the image at most `lqipWidth` pixels wide.
    public var lqip: String?
    /// A BlurHash of the image fitted within `Placeholders.blurhashSide` pixels.
    public var blurhash: String?
    /// The ThumbHash bytes of the image fitted within 100×100, as standard base64 with padding.
    public var thumbhash: String?
    /// `#rrggbb`, lower case: the centre of the most populated bin of sharp's 16×16×16 histogram.
    public var dominantColor: String?
    /// True when the image lets the page through somewhere (an alpha value below 255), so that a
    /// placeholder shown behind it would stay visible after it loads; nil for an opaque image.
    public var transparent: Bool?

    /// Placeholders with the given values; those not asked for stay nil.
    public init(
        lqip: String? = nil, blurhash: String? = nil, thumbhash: String? = nil, dominantColor: String? = nil, transparent: Bool? = nil
    ) {
        self.lqip = lqip
        self.blurhash = blurhash
        self.thumbhash = thumbhash
        self.dominantColor = dominantColor
        self.transparent = transparent
    }

    /// Computes the placeholders of `kinds` for `image` (any libvips image that converts to
    /// sRGB: 1–4 bands, 8 or 16 bits, with or without alpha).
    ///
    /// Every setting the kinds use is checked before any pixel is read. `transparent` is found
    /// whenever any kind is asked for.
    public init(
        of image: VipsImage,
        kinds: Set<PlaceholderKind> = Set(PlaceholderKind.allCases),
        settings: PlaceholderSettings = PlaceholderSettings()
    ) throws(PlaceholderError) {
        let ordered = PlaceholderKind.allCases.filter(kinds.contains)
        for kind in ordered { try settings.validate(for: kind) }
        guard let first = ordered.first else {
            self.init()
            return
        }
        let source = try PlaceholderSource(image, for: first)
        self.init(transparent: try source.isTransparent(naming: first) ? true : nil)
        for kind in ordered {
            switch kind {
            case .lqip: lqip = try Self.lqip(of: source, width: settings.lqipWidth, quality: settings.lqipQuality)
            case .blurhash:
                blurhash = try Self.blurhash(
                    of: source, xComponents: settings.blurhashXComponents, yComponents: settings.blurhashYComponents)
            case .thumbhash: thumbhash = try Self.thumbhash(of: source)
            case .dominantColor: dominantColor = try Self.dominantColor(of: source)
            }
        }
    }

    /// The value computed for `kind`, if any.
    public subscript(kind: PlaceholderKind) -> String? {
        get {
            switch kind {
            case .lqip: lqip
            case .blurhash: blurhash
            case .thumbhash: thumbhash
            case .dominantColor: dominantColor
            }
        }
        set {
            switch kind {
            case .lqip: lqip = newValue
            case .blurhash: blurhash = newValue
            case .thumbhash: thumbhash = newValue
            case .dominantColor: dominantColor = newValue
            }
        }
    }
}
