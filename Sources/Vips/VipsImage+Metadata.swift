import CVips

extension VipsImage {
    /// The names of the image's metadata fields (`icc-profile-data`, `exif-ifd0-Make`, …).
    public var fieldNames: [String] {
        withExtendedLifetime(self) {
            guard let fields = vips_image_get_fields(pointer) else { return [] }
            defer { g_strfreev(fields) }
            var names: [String] = []
            var index = 0
            while let name = fields[index] {
                names.append(String(cString: name))
                index += 1
            }
            return names
        }
    }

    /// A copy without the metadata fields `names` (those it does not have are ignored), so
    /// that a saver writes none of them.
    public func removingFields(_ names: [String]) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        for name in names { _ = vips_image_remove(copy.pointer, name) }
        return copy
    }

    /// A copy whose integer metadata field `name` is `value` (for example `loop`, which the
    /// GIF saver writes).
    public func settingIntField(_ name: String, to value: Int) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        vips_image_set_int(copy.pointer, name, Int32(clamping: value))
        return copy
    }

    /// A copy whose string metadata field `name` is `value` (an `exif-ifd0-Make` field, say,
    /// which the JPEG saver writes into the EXIF block).
    public func settingStringField(_ name: String, to value: String) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        vips_image_set_string(copy.pointer, name, value)
        return copy
    }

    /// A copy whose binary metadata field `name` holds `bytes` (a `jpeg-thumbnail-data` field,
    /// say, which the JPEG saver writes into the EXIF block as its thumbnail).
    public func settingBlobField(_ name: String, to bytes: [UInt8]) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        bytes.withUnsafeBytes { vips_image_set_blob_copy(copy.pointer, name, $0.baseAddress, $0.count) }
        return copy
    }

    /// The pixels converted to `profile` (`"srgb"`, `"p3"`, `"cmyk"`, built into libvips, or
    /// an ICC file's path) from the embedded profile, or from sRGB when there is none; the
    /// result carries `profile` embedded.
    public func convertedToProfile(_ profile: String) throws(VipsError) -> VipsImage {
        try applying(
            "icc_transform",
            [
                "output_profile": .string(profile), "input_profile": .string("srgb"), "embedded": .boolean(true),
                "intent": .string("relative"),
            ])
    }

    /// The pixels, taken to be in `profile` (`"cmyk"`, built into libvips, or an ICC file's
    /// path) whatever the image embeds, converted to sRGB; the result carries sRGB embedded.
    public func convertedToSRGB(assuming profile: String) throws(VipsError) -> VipsImage {
        try applying(
            "icc_transform", ["output_profile": .string("srgb"), "input_profile": .string(profile), "intent": .string("relative")])
    }
}
