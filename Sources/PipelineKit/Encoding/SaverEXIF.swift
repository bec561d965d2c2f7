import Foundation
import Vips

/// The EXIF block libvips 8.14's savers write of their own making: its JPEG saver whenever it
/// writes any metadata (the colour profile kept, say), and its WebP saver even with `strip`,
/// build one from the image's size, resolution and orientation when the image carries none.
/// Where an output does not keep EXIF and the image is upright (`ImageEncoder.dropsSaverEXIF`),
/// it is taken out of the file the saver wrote, so that `keep` says what a file holds (and a
/// small file is not a few hundred bytes larger for it).
enum SaverEXIF {
    /// `data`, a file in `format` that libvips wrote, without its EXIF block; as it is for the
    /// other formats, and for a file not laid out as expected.
    static func removed(from data: Data, format: EncoderSettings.Format) -> Data {
        switch format {
        case .jpeg: VipsImage.jpegWithoutEXIF(data)
        case .webp: WebPChunks.removing(from: data, flags: WebPChunks.exifFlag) { $0 == "EXIF" }
        default: data
        }
    }
}
