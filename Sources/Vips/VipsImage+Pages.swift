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

extension VipsImage {
    /// The pages (animation frames) of an image whose pages are stacked top to bottom.
    public func pages() throws(VipsError) -> [VipsImage] {
        let height = pageHeight
        guard height > 0, height < self.height, self.height % height == 0 else { return [self] }
        var pages: [VipsImage] = []
        for index in 0..<(self.height / height) {
            pages.append(try extracted(left: 0, top: index * height, width: width, height: height))
        }
        return pages
    }

    /// Stacks images of one size top to bottom, as the pages of one image; metadata (frame
    /// delays, loop count) comes from the first.
    public static func joiningPages(_ pages: [VipsImage]) throws(VipsError) -> VipsImage {
        guard let first = pages.first else { throw VipsError(operation: "arrayjoin", message: "no pages to join") }
        guard pages.count > 1 else { return first }
        var pointers: [UnsafeMutablePointer<CVips.VipsImage>?] = pages.map(\.pointer)
        var output: UnsafeMutablePointer<CVips.VipsImage>?
        let status = withExtendedLifetime(pages) { pl_join_vertically(&pointers, &output, Int32(pointers.count)) }
        guard status == 0, let output else { throw VipsError.fromLibrary(operation: "arrayjoin") }
        return try VipsImage(taking: output).withPageHeight(first.height)
    }
}
