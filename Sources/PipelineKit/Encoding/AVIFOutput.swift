import Foundation
import Vips

/// AVIF outputs, encoded by libavif (`VipsImage.encodedAVIF`) rather than libvips' heifsave,
/// with the options meaning what they mean to users of libvips and sharp.
///
/// - `quality` is libheif's: AV1's quantizer is `(100 − quality) × 63 / 100`, rounded, as
///   libheif's aom encoder sets its constant-quality level from the quality libvips gives it.
/// - `effort` is aom's speed as libvips sets it through libheif, `9 − effort`, in aom's all-intra
///   mode (libavif's and libheif's choice for a still image), with no codec options of ours.
///   Measured against heifsave (Benchmarks/avif-settings.sh; Benchmarks/RESULTS.md, "AVIF
///   through libavif"), aom at that speed gives the same bytes and scores by SSIMULACRA 2, and
///   every faster choice (a faster aom speed, with or without a finer quantizer and the tools
///   that raise scores; aom's partition switches; rav1e; SVT-AV1) gave larger or worse files,
///   so it is the only choice that keeps the promise.
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
        AVIFEncoding(
            codec: .aom, speed: speed(effort: settings.effort), quantizer: settings.lossless ? 0 : quantizer(quality: settings.quality),
            lossless: settings.lossless, fullChroma: settings.lossless || settings.quality >= 90,
            keepsMetadata: !settings.keptMetadata.isEmpty)
    }

    /// AV1's quantizer for `quality` (1–100), as libheif maps it: 100 is 0, 1 is 62.
    static func quantizer(quality: Int) -> Int {
        ((100 - quality) * 63 + 50) / 100
    }

    /// aom's speed (cpu-used) for `effort` 0–9, as libvips sets it through libheif.
    static func speed(effort: Int) -> Int {
        9 - min(max(effort, 0), 9)
    }
}
