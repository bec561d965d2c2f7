#if Server
import Foundation
import Hummingbird
import PipelineKit
import Vips

/// `serve.fallback`: the image answered, as imgproxy's fallback image, in place of an input that
/// cannot be read as an image or made into the output. Read once, when the routes are made; made
/// as narrow as the width asked for, as imgproxy makes its fallback into the file asked for, so
/// that a thumbnail's place on a page does not get a photograph's bytes.
final class FallbackImage: Sendable {
    /// Marks an answer as the fallback image, not the file asked for.
    static let header = HTTPFields.Element.Name("X-Pipeline-Fallback")!

    private let data: Data
    private let format: EncoderSettings.Format
    /// The image's own width, past which it is answered as it is; nil when it cannot be
    /// narrowed (libvips cannot read it again, or it has frames, which one frame would lose).
    private let width: Int?
    /// The image made narrower, by width: as many as the file's outputs declare widths.
    private let narrowed = Locked<[Int: ByteBuffer]>([:])

    /// The image of `settings`, or nil when it can no longer be read as the image the file's
    /// check found (it was removed, or replaced by what is no image of its format, since).
    init?(_ settings: ServeSettings.Fallback) {
        guard let file = FileManager.default.contents(atPath: settings.file.path), let image = try? VipsImage.open(data: file),
            EncoderSettings.Format(header: image) == settings.format
        else { return nil }
        let frames = image.intField("n-pages") ?? 1
        if EncoderSettings.Metadata.fieldsBesidesColour(of: image).isEmpty {
            data = file
        } else {
            // Answered as it stands where it is not narrowed: nothing personal (a camera's EXIF,
            // with GPS) is published, as no output publishes it unless asked to.
            guard let stripped = try? Self.withoutMetadata(file, frames: frames, as: settings.format) else { return nil }
            data = stripped
        }
        format = settings.format
        width = frames == 1 ? image.width : nil
    }

    /// `data`, every frame, encoded again in `format` in sRGB and without metadata, at a
    /// quality high enough to be taken for the file.
    private static func withoutMetadata(_ data: Data, frames: Int, as format: EncoderSettings.Format) throws(VipsError) -> Data {
        try plain(VipsImage.open(data: data, options: frames > 1 ? "n=-1" : ""), as: format, quality: 90)
    }

    /// `image` encoded in `format`, in sRGB and without metadata; at `quality` when given and
    /// the format is lossy, else at libvips' default.
    private static func plain(_ image: VipsImage, as format: EncoderSettings.Format, quality: Int? = nil) throws(VipsError) -> Data {
        let colours = image.hasField("icc-profile-data") ? try image.convertedFromEmbeddedProfileToSRGB() : image
        let lossy: Set<EncoderSettings.Format> = [.jpeg, .webp, .avif, .heic, .jxl]
        let setting = quality.flatMap { lossy.contains(format) ? ",Q=\($0)" : nil } ?? ""
        return try colours.encoded(suffix: ".\(format.fileExtension)[strip\(setting)]")
    }

    /// 200 with the image, no wider than `width` when given. Not cached for long: the input may
    /// be fixed.
    func response(width asked: Int?) -> Response {
        Response(
            status: .ok, headers: [.contentType: format.mimeType, .cacheControl: "no-cache", Self.header: "1"],
            body: .inPieces(body(width: asked)))
    }

    /// The image's bytes at `asked` pixels wide (its own height in proportion), or as they are
    /// when it is no wider, or cannot be made so.
    private func body(width asked: Int?) -> ByteBuffer {
        guard let asked, let width, asked < width else { return ByteBuffer(bytes: data) }
        if let made = narrowed.withLock({ $0[asked] }) { return made }
        guard let made = try? Self.narrowed(data, to: asked, as: format) else { return ByteBuffer(bytes: data) }
        let bytes = ByteBuffer(bytes: made)
        narrowed.withLock { $0[asked] = bytes }
        return bytes
    }

    /// `data` made `width` pixels wide by libvips' thumbnailer, in `format`, in sRGB and
    /// without metadata.
    private static func narrowed(_ data: Data, to width: Int, as format: EncoderSettings.Format) throws(VipsError) -> Data {
        let image = try VipsImage.open(data: data)
        // The height is the image's own, so that the width alone decides (libvips' box is
        // otherwise square).
        let arguments: [String: VipsValue] = ["in": .image(image), "width": .integer(width), "height": .integer(image.height)]
        guard let thumbnail = try Vips.call("thumbnail_image", arguments)["out"]?.image else {
            throw VipsError(operation: "thumbnail_image", message: "no image made")
        }
        return try plain(thumbnail, as: format)
    }
}
#endif
