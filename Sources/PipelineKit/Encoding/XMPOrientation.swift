/// The orientation an XMP packet states (`tiff:Orientation`), set to the image's own: the decoder
/// turns an image upright and sets its EXIF orientation to 1, but the packet is the input's, and
/// a viewer that reads it where there is no EXIF block would turn the image again.
enum XMPOrientation {
    /// `packet` with every `tiff:Orientation` (as an attribute or an element) set to
    /// `orientation`, or nil when it states none, or already states that one, or is not UTF-8.
    static func setting(_ orientation: Int, in packet: [UInt8]) -> [UInt8]? {
        guard let text = String(validating: packet, as: UTF8.self), text.contains("tiff:Orientation") else { return nil }
        let value = String(orientation)
        var changed = text.replacing(#/(tiff:Orientation\s*=\s*["'])\s*\d+\s*(["'])/#) { "\($0.1)\(value)\($0.2)" }
        changed = changed.replacing(#/(<tiff:Orientation>)\s*\d+\s*(</tiff:Orientation>)/#) { "\($0.1)\(value)\($0.2)" }
        return changed == text ? nil : Array(changed.utf8)
    }
}
