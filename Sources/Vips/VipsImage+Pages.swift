import CVips

extension VipsImage {
    /// The height of one page or animation frame; the image height for a single-page image.
    public var pageHeight: Int { Int(vips_image_get_page_height(pointer)) }

    /// A copy whose pages are `height` rows each: savers that support pages or animation
    /// (GIF, WebP, TIFF) write one page or frame per `height` rows.
    public func withPageHeight(_ height: Int) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        vips_image_set_int(copy.pointer, "page-height", Int32(height))
        return copy
    }
}
