/// One kind of placeholder that stands in for an image on a web page while the image loads.
///
/// The raw value is the placeholder's key in a manifest (`Placeholders` encodes to JSON with
/// these keys).
public enum PlaceholderKind: String, CaseIterable, Codable, Hashable, Sendable {
    /// A `data:image/webp;base64,…` URI of a tiny copy of the image.
    case lqip
    /// Wolt's BlurHash: a short base-83 string of a few DCT components.
    case blurhash
    /// Evan Wallace's ThumbHash: about 25 bytes of DCT components with alpha and aspect ratio,
    /// as standard base64.
    case thumbhash
    /// The image's dominant colour as `#rrggbb`, computed as sharp's `stats().dominant`.
    case dominantColor
}
