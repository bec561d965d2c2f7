import Foundation
import Vips

/// Small JPEG previews for the report page, embedded as `data:` URIs so the page needs no
/// file but itself for its input column, and no network at all.
enum ReportThumbnail {
    /// The longest side of a thumbnail, in pixels.
    static let side = 160
    /// Files with more pixels than this are not previewed (the run's own `maxPixels` already
    /// vetted the inputs it decoded; this guards the previews of anything else).
    static let maxPixels = 100_000_000
    /// The most pixels an AVIF sequence's frame may have to be previewed: libavif decodes it
    /// whole, with no shrink on load, so only frames of a web page's sizes are.
    static let maxSequencePixels = 4096 * 4096

    /// A `data:image/jpeg;base64,…` URI of the image file at `path`, fitted inside
    /// `side`×`side`, upright, in sRGB; nil when no loader this process permits reads it.
    ///
    /// Previews read files as a run does, with libvips' untrusted loaders blocked: the paths come
    /// from a report, which `merge-reports` may take from anywhere, and a file may have changed
    /// since its run. An SVG or PDF input that a run allowed is previewed from its output then.
    static func dataURI(forImageAt path: String) -> (uri: String, width: Int, height: Int)? {
        guard (try? Vips.prepareForUntrustedInput()) != nil else { return nil }
        // An animated output, which libvips does not read, by its first frame through libavif:
        // the file is looked at for that only when libvips could not read it.
        guard
            let image = VipsImage.permittedLoader(file: path).flatMap({ try? thumbnail(ofFileAt: path, loader: $0) })
                ?? (VipsImage.isAVIFSequence(file: path)
                    ? try? fitted(VipsImage.firstAVIFFrame(file: path, maxPixels: maxSequencePixels)) : nil)
        else { return nil }
        guard let jpeg = try? image.encoded(suffix: ".jpg[Q=75,strip]") else { return nil }
        return ("data:image/jpeg;base64," + jpeg.base64EncodedString(), image.width, image.height)
    }

    private static func thumbnail(ofFileAt path: String, loader: String) throws -> VipsImage {
        let header = try VipsImage.open(file: path, loader: loader)
        guard header.width * header.height <= maxPixels else { throw VipsError(operation: "thumbnail", message: "too many pixels") }
        let longest = max(header.width, header.height)
        // Shrink on load as the decompress stage does: JPEG by a power of two (never past the
        // shorter side, `DecodePlan.loadShrink`), WebP to the size.
        var options = ["access=sequential"]
        let nickname = header.loader ?? ""
        if nickname.hasPrefix("jpegload") {
            let shrink = DecodePlan.loadShrink(
                allowed: Double(longest) / Double(side), loader: nickname, fast: true,
                stored: ImageSize(width: header.width, height: header.height))
            if shrink > 1 { options.append("shrink=\(shrink)") }
        } else if nickname.hasPrefix("webpload"), longest > side {
            options.append("scale=\(Double(side) / Double(longest))")
        }
        return try fitted(VipsImage.open(file: path, options: options.joined(separator: ","), loader: loader))
    }

    /// `image` fitted inside `side`×`side`, upright, in sRGB, without alpha.
    private static func fitted(_ decoded: VipsImage) throws -> VipsImage {
        var image = decoded
        let scale = Double(side) / Double(max(image.width, image.height))
        if scale < 1 {
            image = try image.resampled(
                to: ImageSize(
                    width: max(1, Int((Double(image.width) * scale).rounded())),
                    height: max(1, Int((Double(image.height) * scale).rounded()))))
        }
        image = try image.rendered()
        if image.orientation != 1 { image = try image.autorotated() }
        image = try ImageDecoder.toSRGB(image)
        if image.hasAlpha {
            // JPEG has no alpha: show transparent parts as the page's white card.
            image = try image.flattened(background: Array(repeating: 255, count: image.bands - 1))
        }
        return image
    }
}
