import CVips

extension VipsImage {
    /// Converts sRGB pixels into another colour profile and embeds it, as a camera or editor
    /// working in that space writes files: `"p3"` and `"cmyk"` are built into libvips, anything
    /// else is read as an ICC file.
    public func convertedFromSRGB(toProfile profile: String) throws(VipsError) -> VipsImage {
        try derive("icc_transform") { pl_icc_transform_from_srgb($0, $1, profile) }
    }
}
