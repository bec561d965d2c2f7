import CVips
import Foundation

extension VipsImage {
    /// Makes an 8-bit image from interleaved pixel values (row by row, `bands` values a pixel).
    public convenience init(pixels: [UInt8], width: Int, height: Int, bands: Int) throws(VipsError) {
        try Vips.start()
        precondition(pixels.count == width * height * bands, "pixel count does not match the size")
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy($0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        }
        guard let image else { throw VipsError.fromLibrary(operation: "new_from_memory") }
        self.init(taking: image)
        try labelLikeADecoder()
    }

    /// Makes a 16-bit image from interleaved pixel values.
    public convenience init(pixels16: [UInt16], width: Int, height: Int, bands: Int) throws(VipsError) {
        try Vips.start()
        precondition(pixels16.count == width * height * bands, "pixel count does not match the size")
        let image = pixels16.withUnsafeBytes {
            vips_image_new_from_memory_copy($0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_USHORT)
        }
        guard let image else { throw VipsError.fromLibrary(operation: "new_from_memory") }
        self.init(taking: image)
    }

    /// Labels 1–2 bands as greyscale and 3–4 as sRGB, as a decoder would, so that a second or
    /// fourth band counts as alpha. Safe here: nobody else has seen the new image yet.
    private func labelLikeADecoder() throws(VipsError) {
        let label: VipsInterpretation
        switch bands {
        case 1, 2: label = VIPS_INTERPRETATION_B_W
        case 3, 4: label = VIPS_INTERPRETATION_sRGB
        default: return
        }
        pointer.pointee.Type = label
    }

    /// The band values of the pixel at (`x`, `y`).
    public func pixel(x: Int, y: Int) throws(VipsError) -> [Double] {
        var vector: UnsafeMutablePointer<Double>?
        var count: Int32 = 0
        let status = withExtendedLifetime(self) { pl_getpoint(pointer, &vector, &count, Int32(x), Int32(y)) }
        guard status == 0, let vector else { throw VipsError.fromLibrary(operation: "getpoint") }
        defer { g_free(vector) }
        return Array(UnsafeBufferPointer(start: vector, count: Int(count)))
    }

    /// A copy that carries the given EXIF orientation (written to the file when saved).
    public func withOrientation(_ orientation: Int) throws(VipsError) -> VipsImage {
        let copy = try privateCopy()
        vips_image_set_int(copy.pointer, "orientation", Int32(orientation))
        return copy
    }

    /// Encodes the image into an open file descriptor, which stays open; libvips picks the
    /// saver and its options from `suffix`.
    public func write(toDescriptor descriptor: Int32, suffix: String) throws(VipsError) {
        let status = withExtendedLifetime(self) { pl_write_to_descriptor(pointer, suffix, descriptor) }
        guard status == 0 else { throw VipsError.fromLibrary(operation: "save") }
    }

    /// Encodes the image as JPEG into an open file, as `write(toDescriptor:suffix:)` does, but
    /// without the EXIF block libvips 8.14's saver makes of the image's size and resolution when
    /// it writes any metadata: the image's own EXIF is removed before, where it is not wanted.
    public func writeJPEGWithoutEXIF(toDescriptor descriptor: Int32, suffix: String) throws(VipsError) {
        let status = withExtendedLifetime(self) { pl_write_jpeg_without_exif(pointer, suffix, descriptor) }
        guard status == 0 else { throw VipsError.fromLibrary(operation: "save") }
    }

    /// A JPEG file's bytes without their EXIF segments (as `writeJPEGWithoutEXIF` writes them);
    /// bytes that are not a JPEG's as they are.
    public static func jpegWithoutEXIF(_ data: Data) -> Data {
        var result = Data(count: data.count)
        let length = result.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { bytes in
                guard let source = bytes.baseAddress, let target = out.baseAddress else { return 0 }
                return pl_jpeg_copy_without_exif(
                    source.assumingMemoryBound(to: UInt8.self), bytes.count, target.assumingMemoryBound(to: UInt8.self))
            }
        }
        result.count = length
        return result
    }

    /// Encodes the image; libvips picks the saver and reads its options from `suffix`,
    /// for example `".webp[Q=80,effort=4]"`.
    public func encoded(suffix: String) throws(VipsError) -> Data {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = withExtendedLifetime(self) { pl_write_to_buffer(pointer, suffix, &buffer, &length) }
        guard status == 0, let buffer else { throw VipsError.fromLibrary(operation: "save") }
        return Data(bytesNoCopy: buffer, count: length, deallocator: .custom { pointer, _ in g_free(pointer) })
    }
}
