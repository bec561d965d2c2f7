import Foundation
import Vips

extension ImageDecoder {
    /// What an input's header says, read through the decoder's own checks: the loaders the file
    /// permits, `decompress.failOn`, `decompress.maxPixels`, and a local file held to the
    /// version the fetch stage saw (`pinned`). No pixels are decoded.
    struct InputHeader: Sendable {
        /// The size the file stores.
        let stored: ImageSize
        /// The size the run turns it to (`decompress.autorotate`): what its outputs are made from.
        let upright: ImageSize
        /// The EXIF orientation, 1 to 8 (1 when the file has none).
        let orientation: Int
        /// Whether it has an alpha band.
        let hasAlpha: Bool
        /// The container's format, as the project names formats (`jpeg`, `png`, `webp`, `avif`, …).
        let format: String
    }

    /// A header read that failed, and whether its reason came through libvips' shared error
    /// buffer (then it is read again alone, as a decode is: `decodeGated`).
    private struct HeaderFailure: Error {
        let itemError: ItemError
        var reasonIsFromLibvips = false
    }

    /// Reads `source`'s header, or throws why a run could not decode it: the reason a decode
    /// would give, from the decompress stage. Blocking work: call it on a lane.
    func header(of source: EncodedSource) throws(ItemError) -> InputHeader {
        try pinned(source) { held throws(ItemError) in try headerGated(held) }
    }

    /// Read side by side with decodes through `LibvipsErrorText.gate`; again alone when the
    /// reason came from libvips' shared error buffer, so that the reason is this input's.
    private func headerGated(_ source: EncodedSource) throws(ItemError) -> InputHeader {
        do {
            return try LibvipsErrorText.gate.shared { () throws(HeaderFailure) in try readHeaderOnce(source) }
        } catch  where !error.reasonIsFromLibvips {
            throw error.itemError
        } catch {
            do {
                return try LibvipsErrorText.gate.exclusive { () throws(HeaderFailure) in
                    Vips.clearErrors()
                    return try readHeaderOnce(source)
                }
            } catch {
                throw error.itemError
            }
        }
    }

    private func readHeaderOnce(_ source: EncodedSource) throws(HeaderFailure) -> InputHeader {
        if let reason = unreadableReason(source) { throw HeaderFailure(itemError: reason) }
        do {
            let header = try openHeader(source, options: "fail_on=\(settings.failOn.rawValue)")
            let pixels = header.width * header.height
            guard pixels <= settings.maxPixels else {
                throw ItemError(
                    .tooManyPixels, stage: .decompress,
                    reason:
                        "the image is \(header.width)×\(header.height) (\(pixels) pixels), "
                        + "more than decompress.maxPixels (\(settings.maxPixels))")
            }
            return InputHeader(
                stored: ImageSize(width: header.width, height: header.height), upright: uprightSize(header),
                orientation: header.orientation, hasAlpha: header.hasAlpha, format: Self.formatName(of: header))
        } catch let error as ItemError {
            throw HeaderFailure(itemError: error)
        } catch {
            if let damage = FileDamage.reason(in: source) {
                throw HeaderFailure(itemError: ItemError(.undecodable, stage: .decompress, reason: damage, underlying: error))
            }
            throw HeaderFailure(itemError: LibvipsErrorText.itemError(for: error, source: source), reasonIsFromLibvips: true)
        }
    }

    /// The format of the file `header` was opened from, named as `EncoderSettings.Format` names
    /// formats where it has one (`jpeg`, `png`, `webp`, `gif`, `tiff`, `jxl`; libheif's files
    /// are `avif` or `heic` by their compression), else by its libvips loader (`svg`, `pdf`).
    static func formatName(of header: VipsImage) -> String {
        let loader = header.loader ?? "unknown"
        let nickname = loader.prefix { $0 != "_" }
        let family = nickname.hasSuffix("load") ? String(nickname.dropLast("load".count)) : String(nickname)
        switch family {
        case "heif": return header.stringField("heif-compression") == "av1" ? "avif" : "heic"
        case "magick": return header.stringField("magick-format")?.lowercased() ?? family
        default: return family
        }
    }
}
