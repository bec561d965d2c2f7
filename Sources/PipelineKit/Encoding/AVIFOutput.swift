import Foundation
import Vips

/// AVIF outputs, encoded by libavif (`VipsImage.encodedAVIF`) rather than libvips' heifsave,
/// with the options meaning what they mean to users of libvips and sharp.
///
/// - `quality` is libheif's: AV1's quantizer is `(100 − quality) × 63 / 100`, rounded, as
///   libheif's aom encoder sets its constant-quality level from the quality libvips gives it.
/// - `effort` chooses the encoder and its speed (`AVIFOutput.effortTable`), from measurement:
///   at each effort the files are no larger and score no worse by SSIMULACRA 2 than heifsave's
///   at that effort, and take less time (Benchmarks/RESULTS.md, "AVIF through libavif").
/// - Chroma is subsampled (4:2:0) below quality 90 and kept whole (4:4:4) from it, as libvips'
///   heifsave does by default; lossless keeps RGB as it is, in 4:4:4.
/// - The file carries the ICC profile, EXIF and XMP unless nothing is kept, as heifsave does
///   without and with `strip` (what `keep` leaves out is removed before, by `ImageEncoder`).
enum AVIFOutput {
    /// The bytes of `image` (prepared by `ImageEncoder.prepare`) encoded with `settings`.
    static func encoded(_ image: VipsImage, settings: EncoderSettings) throws(VipsError) -> Data {
        try image.encodedAVIF(encoding(settings), cores: AvailableCores.count)
    }

    /// libavif's encoding for `settings` (an AVIF output's).
    static func encoding(_ settings: EncoderSettings) -> AVIFEncoding {
        let keeps = !settings.keptMetadata.isEmpty
        if settings.lossless {
            // Only aom codes losslessly; its speed as at this effort.
            return AVIFEncoding(
                codec: .aom, speed: libheifSpeed(settings.effort), quantizer: 0, lossless: true, fullChroma: true,
                keepsMetadata: keeps)
        }
        let row = effortTable[min(max(settings.effort, 0), effortTable.count - 1)]
        let quantizer = min(63, max(0, quantizer(quality: settings.quality) - row.finer))
        return AVIFEncoding(
            codec: row.codec, speed: row.speed, quantizer: quantizer, fullChroma: settings.quality >= 90, keepsMetadata: keeps,
            codecOptions: row.options)
    }

    /// AV1's quantizer for `quality` (1–100), as libheif maps it: 100 is 0, 1 is 62.
    static func quantizer(quality: Int) -> Int {
        ((100 - quality) * 63 + 50) / 100
    }

    /// aom's speed (cpu-used) for `effort` as libvips sets it through libheif: 9 − effort.
    static func libheifSpeed(_ effort: Int) -> Int {
        9 - min(max(effort, 0), 9)
    }

    /// One effort's encoder: the codec, its speed, the quantizer steps below libheif's for the
    /// same quality (what keeps a faster speed's files as good), and the codec's own options.
    struct Effort: Sendable {
        let codec: AVIFEncoding.Codec
        let speed: Int
        let finer: Int
        let options: String?
    }

    /// The encoder for each effort, 0 to 9, chosen by measurement (Benchmarks/RESULTS.md, "AVIF
    /// through libavif"; docs/formats.md explains it).
    static let effortTable: [Effort] = (0...9).map { effort in
        Effort(codec: .aom, speed: libheifSpeed(effort), finer: 0, options: nil)
    }
}
