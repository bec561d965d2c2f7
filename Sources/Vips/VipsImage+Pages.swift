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
    /// The frame delays of an animation in milliseconds, one a frame (libvips' `delay` field,
    /// which the GIF and WebP loaders set and savers write); nil when there are none.
    public var frameDelays: [Int]? {
        withExtendedLifetime(self) {
            guard hasField("delay") else { return nil }
            var values: UnsafeMutablePointer<Int32>?
            var count: Int32 = 0
            guard vips_image_get_array_int(pointer, "delay", &values, &count) == 0, let values, count > 0 else { return nil }
            return (0..<Int(count)).map { Int(values[$0]) }
        }
    }

    /// A copy whose frame delays (`frameDelays`) are `delays`, in milliseconds.
    public func settingFrameDelays(_ delays: [Int]) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        var values = delays.map { Int32(clamping: $0) }
        vips_image_set_array_int(copy.pointer, "delay", &values, Int32(values.count))
        return copy
    }
}

extension VipsImage {
    /// The pages (animation frames) of an image whose pages are stacked top to bottom.
    ///
    /// Cut through strips, at most `fanOut` from any one image: libvips searches the list of an
    /// image's readers, and the regions they hold, whenever it adds one, so thousands of pages
    /// cut from one image made computing them take time of the cube of their number.
    public func pages(fanOut: Int = 32) throws(VipsError) -> [VipsImage] {
        let height = pageHeight
        guard height > 0, height < self.height, self.height % height == 0 else { return [self] }
        let count = self.height / height
        let perStrip = count <= fanOut ? 1 : (count + fanOut - 1) / fanOut
        var pages: [VipsImage] = []
        pages.reserveCapacity(count)
        for first in stride(from: 0, to: count, by: perStrip) {
            let strip = try extracted(left: 0, top: first * height, width: width, height: min(perStrip, count - first) * height)
            pages += perStrip == 1 ? [strip] : try strip.withPageHeight(height).pages(fanOut: fanOut)
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

    /// Stacks images of one width top to bottom, whatever their heights, the page height left to
    /// the caller; metadata comes from the first. `joiningPages(_:)` alone would not do: libvips'
    /// `arrayjoin` makes every cell as tall as the tallest image, so a shorter last image would
    /// come out padded with empty rows (whole blank frames, in an animation).
    public static func stacking(_ images: [VipsImage]) throws(VipsError) -> VipsImage {
        guard let first = images.first else { throw VipsError(operation: "arrayjoin", message: "no images to stack") }
        let alike = images.prefix { $0.height == first.height }
        var stack = try joiningPages(Array(alike))
        for image in images[alike.endIndex...] {
            stack = try stack.applying("join", ["in2": .image(image), "direction": .string("vertical")])
        }
        return stack
    }
}
