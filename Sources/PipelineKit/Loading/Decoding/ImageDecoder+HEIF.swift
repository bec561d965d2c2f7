import Vips

/// What libvips' HEIF loader passes over in a HEIC or AVIF, given to the image as it is opened,
/// so that the rest of the decoder, `keep` and the savers see the fields they know.
extension ImageDecoder {
    /// `image`, a HEIC or AVIF whose XMP packet libvips' HEIF loader gives as a MIME item
    /// (`heif-mime-N`), with that packet moved to `xmp-data`, the field `keep` and every saver
    /// know; any other image as it is. Without it, `"keep": ["xmp"]` lost the packet unsaid.
    /// The packet says orientation 1: libheif turns the image by the file's own boxes (`irot`,
    /// `imir`), and HEIF has readers ignore the orientation EXIF and XMP state, so the image as
    /// opened is upright, whatever a phone wrote there.
    static func withXMPOfItsMIMEItem(_ image: VipsImage) throws -> VipsImage {
        guard image.loader?.hasPrefix("heifload") == true else { return image }
        guard !image.hasField("xmp-data") else { return try XMPOrientation.upright(image) }
        for name in image.fieldNames where name.hasPrefix("heif-mime-") {
            guard let item = image.blobCopy(name), Self.isXMPPacket(item) else { continue }
            return try XMPOrientation.upright(image.settingBlobField("xmp-data", to: item).removingFields([name]))
        }
        return image
    }

    /// Whether `bytes` open as an XMP packet does: its `<?xpacket` wrapper, its `<x:xmpmeta`
    /// element, or a bare `<rdf:RDF`, near the start (after a byte-order mark, an XML prolog or
    /// white space).
    static func isXMPPacket(_ bytes: [UInt8]) -> Bool {
        let start = String(decoding: bytes.prefix(1024), as: UTF8.self)
        return ["<?xpacket", "<x:xmpmeta", "<rdf:RDF"].contains { start.contains($0) }
    }

    /// `image`, an AVIF without an ICC profile, with the profile its colour box implies
    /// (`AVIFColourDescription.impliedProfile`), which libvips' HEIF loader passes over; any
    /// other image as it is.
    static func withProfileOfItsColourBox(_ image: VipsImage, from source: EncodedSource) throws -> VipsImage {
        guard !image.hasICCProfile, image.loader?.hasPrefix("heifload") == true, image.stringField("heif-compression") == "av1"
        else { return image }
        let description =
            switch source {
            case .file(let path, _, _, _): AVIFColourDescription.read(file: path)
            case .memory(let bytes): AVIFColourDescription.read(bytes: bytes)
            }
        guard let profile = description?.impliedProfile else { return image }
        return try image.settingBlobField("icc-profile-data", to: profile)
    }
}
