import CVips

extension VipsImage {
    /// The length in bytes of the metadata blob `name` (`exif-data`, `xmp-data`, …), or nil
    /// when the image has no blob of that name.
    public func blobLength(_ name: String) -> Int? {
        blobBytes(name)?.count
    }

    /// A copy of the bytes of the metadata blob `name`, or nil when the image has no blob of
    /// that name.
    public func blobCopy(_ name: String) -> [UInt8]? {
        withExtendedLifetime(self) { blobBytes(name).map { Array($0) } }
    }

    /// The bytes of the metadata blob `name`, in the image's own memory (valid while the image
    /// lives), or nil when the image has no blob of that name. The type is checked first: asking
    /// libvips for a blob it does not hold writes its shared error buffer.
    func blobBytes(_ name: String) -> UnsafeRawBufferPointer? {
        withExtendedLifetime(self) { () -> UnsafeRawBufferPointer? in
            guard vips_image_get_typeof(pointer, name) == vips_blob_get_type() else { return nil }
            var data: UnsafeRawPointer?
            var length = 0
            guard vips_image_get_blob(pointer, name, &data, &length) == 0 else { return nil }
            return UnsafeRawBufferPointer(start: data, count: length)
        }
    }
}
