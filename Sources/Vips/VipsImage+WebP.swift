import CVips
import CWebP
import Foundation

/// Decoding a still WebP straight with libwebp, scaling while decoding.
///
/// libvips' WebP loader decodes to RGBA into a frame image it then copies out, and asks libwebp
/// for a second thread to filter on. The pipeline already keeps every core busy with images of
/// its own, so here libwebp decodes on the calling thread into the image's own buffer, as RGB
/// (RGBA when the file has alpha), at the size asked for: the same libwebp decode and rescale,
/// the same pixels (`WebPTests` compares them with libvips' loader), with less work around it.
/// Animated files, and any file libwebp finds a fault in, are left to libvips' loader, which
/// then reads or rejects them as it always has.
extension VipsImage {
    /// Decodes the still WebP file at `path`, which `header` (libvips' header of it) describes,
    /// at `width`×`height` (its own size or smaller: libwebp's rescaler, as libvips' loader uses
    /// for its scale). The image carries `header`'s metadata (profile, EXIF, XMP). Nil when it
    /// is not a still WebP of the header's size and bands, or libwebp could not decode it:
    /// libvips' loader should read it then.
    public static func decodeWebP(file path: String, header: VipsImage, width: Int, height: Int) -> VipsImage? {
        guard DirectWebP.takes(header, width: width, height: height),
            let file = WholeFile.read(path, mostBytes: DirectWebP.mostFileBytes)
        else { return nil }
        defer { WholeFile.release(file) }
        return DirectWebP.decode(UnsafeRawBufferPointer(file), header: header, width: width, height: height)
    }

    /// As `decodeWebP(file:header:width:height:)`, for WebP bytes in memory (read in place).
    public static func decodeWebP(bytes: VipsBytes, header: VipsImage, width: Int, height: Int) -> VipsImage? {
        guard DirectWebP.takes(header, width: width, height: height) else { return nil }
        return bytes.withUnsafeBytes { DirectWebP.decode($0, header: header, width: width, height: height) }
    }
}

/// The parts of the direct WebP decode.
enum DirectWebP {
    /// A RIFF file's size field is 32 bits.
    static let mostFileBytes = Int(UInt32.max)

    /// Whether libvips' header shows a still 8-bit RGB or RGBA WebP that `width`×`height` does
    /// not enlarge.
    static func takes(_ header: VipsImage, width: Int, height: Int) -> Bool {
        header.loader?.hasPrefix("webpload") == true && header.pageCount == 1 && header.bandFormat == .uchar
            && (3...4).contains(header.bands) && (1...header.width).contains(width) && (1...header.height).contains(height)
    }

    /// The image decoded from `bytes`, or nil when they are not what `header` says or do not decode.
    static func decode(_ bytes: UnsafeRawBufferPointer, header: VipsImage, width: Int, height: Int) -> VipsImage? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let count = width * height * header.bands
        guard let pixels = pl_map_buffer(count) else { return nil }
        guard
            pl_webp_decode(
                base, bytes.count, Int32(header.width), Int32(header.height), Int32(width), Int32(height),
                Int32(header.bands), pixels.assumingMemoryBound(to: UInt8.self), count) == 0
        else {
            pl_unmap_buffer(pixels, count)
            return nil
        }
        guard let image = pl_image_taking_buffer(pixels, count, Int32(width), Int32(height), Int32(header.bands)) else { return nil }
        withExtendedLifetime(header) { pl_take_metadata(image, header.pointer) }
        return VipsImage(taking: image)
    }
}
