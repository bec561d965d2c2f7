import Vips

/// Decodes a still WebP straight by libwebp at the size the outputs need
/// (`VipsImage.decodeWebP`), rather than through libvips' loader, which spends more CPU time
/// on a large still WebP (Benchmarks/RESULTS.md has the figures).
struct WebPReader: FastReader {
    /// 0: libwebp decodes into the image the estimate counts already.
    func heldBytes(_ source: EncodedSource, header: VipsImage) -> Int64 { 0 }

    /// The WebP decoded at the whole pass's target size; nil leaves it to libvips' loader
    /// (animated, not a WebP, or a fault libwebp found). Windows are never cut from a WebP
    /// (`DecodePlan`): libwebp decodes the whole frame at its scale.
    func read(_ source: EncodedSource, header: VipsImage, pass: DecodePass) -> FastRead? {
        guard case .whole(let size) = pass else { return nil }
        let image =
            switch source {
            case .file(let path, _, _, _): VipsImage.decodeWebP(file: path, header: header, width: size.width, height: size.height)
            case .memory(let bytes): VipsImage.decodeWebP(bytes: bytes, header: header, width: size.width, height: size.height)
            }
        return image.map { FastRead(image: $0) }
    }
}
