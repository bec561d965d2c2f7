import Foundation
import Vips

/// AVIF outputs, encoded by libavif (`VipsImage.encodedAVIF`) rather than libvips' heifsave,
/// with the options meaning what they mean to users of libvips and sharp.
///
/// - `quality` is libheif's: AV1's quantizer is `(100 − quality) × 63 / 100`, rounded, as
///   libheif's aom encoder sets its constant-quality level from the quality libvips gives it.
/// - `effort` is aom's speed as libvips sets it through libheif, `9 − effort`, in aom's all-intra
///   mode (libavif's and libheif's choice for a still image). Measured against heifsave
///   (Benchmarks/avif-settings.sh; Benchmarks/RESULTS.md, "AVIF through libavif"), aom at that
///   speed gives the same bytes and scores by SSIMULACRA 2, and every faster choice (a faster
///   aom speed, with or without a finer quantizer and the tools that raise scores; aom's
///   partition switches on all images; rav1e; SVT-AV1) gave larger or worse files. The one
///   option of ours, partitions from 8×8 at effort 4 on large images (`codecOptions`), kept
///   the files and saved time.
/// - Chroma is subsampled (4:2:0) below quality 90 and kept whole (4:4:4) from it, as libvips'
///   heifsave does by default, unless `chromaSubsampling` says which; lossless keeps RGB as it
///   is, in 4:4:4.
/// - The file carries the ICC profile, EXIF and XMP unless nothing is kept, as heifsave does
///   without and with `strip` (what `keep` leaves out is removed before, by `ImageEncoder`),
///   but no EXIF block of libvips' making for an upright image that carries none (`SaverEXIF`).
/// - An animation (frames stacked `pageHeight` rows each, as GIF and WebP outputs get them)
///   becomes an AVIF image sequence (`VipsImage.encodedAVIFSequence`), each frame shown for its
///   delay; a still image is encoded as one image, as it always was.
enum AVIFOutput {
    /// The bytes of `image` (prepared by `ImageEncoder.prepare`) encoded with `settings`.
    static func encoded(_ image: VipsImage, settings: EncoderSettings) throws(VipsError) -> Data {
        if let frameHeight = frameHeight(of: image) {
            return try image.encodedAVIFSequence(
                encoding(settings, width: image.width, height: frameHeight), frameHeight: frameHeight,
                delays: image.frameDelays ?? [], loop: image.intField("loop"), cores: AvailableCores.count)
        }
        return try image.encodedAVIF(encoding(settings, width: image.width, height: image.height), cores: AvailableCores.count)
    }

    /// The height of one frame of `image` when it holds more than one (an animation the
    /// decoder kept whole for an output that animates), nil for a still image.
    static func frameHeight(of image: VipsImage) -> Int? {
        let height = image.pageHeight
        guard height > 0, height < image.height, image.height % height == 0 else { return nil }
        return height
    }

    /// libavif's encoding for `settings` (an AVIF output's) of a `width`×`height` image.
    static func encoding(_ settings: EncoderSettings, width: Int = 0, height: Int = 0) -> AVIFEncoding {
        let speed = speed(effort: settings.effort)
        let fullChroma = keepsChromaWhole(settings)
        return AVIFEncoding(
            codec: .aom, speed: speed, quantizer: settings.lossless ? 0 : quantizer(quality: settings.quality),
            lossless: settings.lossless, fullChroma: fullChroma, keepsMetadata: !settings.keptMetadata.isEmpty,
            codecOptions: fullChroma ? nil : codecOptions(speed: speed, width: width, height: height))
    }

    /// Whether `settings` keep chroma whole (4:4:4): when lossless, when asked, and by default
    /// from quality 90.
    static func keepsChromaWhole(_ settings: EncoderSettings) -> Bool {
        switch settings.chromaSubsampling {
        case .auto: settings.lossless || settings.quality >= 90
        case .subsample444: true
        case .subsample420: settings.lossless
        }
    }

    /// The shorter side from which aom skips partitions below 8×8 at the default effort.
    static let largeSide = 1024

    /// aom's options beyond libavif's defaults for a lossy, subsampled encode (quality below 90)
    /// at `speed` of a `width`×`height` image, or nil for none.
    ///
    /// At speed 5 (effort 4) on images whose shorter side is at least `largeSide`, partitions
    /// start at 8×8, as aom itself does from 4K: measured on images 1920 wide at quality 50
    /// against heifsave and at qualities 25 and 75 against libavif's defaults (which give
    /// heifsave's files), the files are no larger and score the same on average, and the encode
    /// takes less CPU time (most on fine detail, where 4×4 blocks are searched most). On smaller
    /// images the score fell, and the other efforts and full chroma were not measured, so
    /// nothing else changes.
    static func codecOptions(speed: Int, width: Int, height: Int) -> String? {
        guard speed == 5, min(width, height) >= largeSide else { return nil }
        return "min-partition-size=8"
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
