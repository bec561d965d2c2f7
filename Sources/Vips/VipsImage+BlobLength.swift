import CVips

extension VipsImage {
    /// The length in bytes of the metadata blob `name` (`exif-data`, `xmp-data`, …), or nil
    /// when the image has no blob of that name.
    public func blobLength(_ name: String) -> Int? {
        withExtendedLifetime(self) { () -> Int? in
            guard vips_image_get_typeof(pointer, name) == vips_blob_get_type() else { return nil }
            var data: UnsafeRawPointer?
            var length = 0
            guard vips_image_get_blob(pointer, name, &data, &length) == 0 else { return nil }
            return length
        }
    }
}
