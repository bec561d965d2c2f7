import Foundation
import Vips

extension ImageDecoder {
    /// What an input's header says, read through the decoder's own checks: the loaders the file
    /// permits, `decompress.failOn`, `decompress.maxPixels` and `maxFrames`, and a local file
    /// held to the version the fetch stage saw (`pinned`). No pixels are decoded.
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

    /// Reads `source`'s header, or throws why a run could not decode it: the reason a decode
    /// would give, from the decompress stage. Blocking work: call it on a lane.
    func header(of source: EncodedSource) throws(ItemError) -> InputHeader {
        try pinned(source) { held throws(ItemError) in try headerGated(held) }
    }

    /// Read side by side with decodes, and again alone when libvips' shared error buffer gave the
    /// reason, as a decode is.
    private func headerGated(_ source: EncodedSource) throws(ItemError) -> InputHeader {
        try gated { () throws(Failure) in try readHeaderOnce(source) }
    }

    private func readHeaderOnce(_ source: EncodedSource) throws(Failure) -> InputHeader {
        if let reason = unreadableReason(source) { throw Failure(itemError: reason) }
        do {
            let header = try openCheckedHeader(source)
            // An animation a run refuses for its frames is refused here too.
            try checkFrames(header, loader: header.loader ?? "unknown", source: source)
            return InputHeader(
                stored: ImageSize(width: header.width, height: header.height), upright: uprightSize(header),
                orientation: header.orientation, hasAlpha: header.hasAlpha, format: Self.formatName(of: header))
        } catch let error as ItemError {
            throw Failure(itemError: error)
        } catch {
            let failure = Self.readFailure(error, in: source)
            throw Failure(itemError: failure.error, reasonIsFromLibvips: failure.fromLibvips)
        }
    }

    /// The format of the file `header` was opened from, named as `EncoderSettings.Format` names
    /// formats where it has one (`jpeg`, `png`, `webp`, `gif`, `tiff`, `jxl`; libheif's files
    /// are `avif` or `heic` by their compression, and libavif's sequences `avif`), else by its
    /// libvips loader (`svg`, `pdf`).
    static func formatName(of header: VipsImage) -> String {
        let loader = header.loader ?? "unknown"
        let nickname = loader.prefix { $0 != "_" }
        let family = nickname.hasSuffix("load") ? String(nickname.dropLast("load".count)) : String(nickname)
        switch family {
        case "heif": return header.stringField("heif-compression") == "av1" ? "avif" : "heic"
        case AVIFSequenceReader.loader: return "avif"
        case "magick": return header.stringField("magick-format")?.lowercased() ?? family
        default: return family
        }
    }
}

extension EncoderSettings.Format {
    /// The format of the image in the file at `path` as its bytes say, whatever its name: nil
    /// when no loader a run may use reads it, or when pipeline writes no such format (`svg`).
    public init?(contentOf path: String) {
        // libavif reads the sequences libvips takes for no image.
        if AVIFSequenceReader.isSequence(file: path) {
            self = .avif
            return
        }
        // The loaders libvips does not trust stay out of it, as out of a run's decode.
        guard (try? Vips.prepareForUntrustedInput()) != nil, let header = try? VipsImage.open(file: path) else { return nil }
        self.init(header: header)
    }

    /// The format of the file `header` was opened from, when pipeline writes it.
    public init?(header: VipsImage) {
        self.init(rawValue: ImageDecoder.formatName(of: header))
    }
}
