import Vips

/// What decoding an input and making its outputs will hold, from its header alone: what
/// admission by memory (`MemoryAccountant.admission`) weighs before the decode starts, and what
/// `explain` shows. The pieces are counted at 4 bytes a pixel (8-bit RGBA, the most the decoder
/// keeps), as libvips streams most decodes; what it holds beyond that is counted where it grows
/// with the image (rows of a very wide image, a decode that cannot stream, the readers' rows).
struct DecodeMemoryEstimate: Equatable {
    /// Bytes that decoding it and making every output from it may hold at once.
    let estimate: Int64
    /// Of those, what the loader holds at full size (`unstreamedDecodeBytes(_:)`). A PNG read
    /// whole is not counted: it is read whole only when its allowance has room.
    let unstreamed: Int64

    /// An input's estimate (admission by memory and `explain` both): the decode plan's images
    /// and rows (`planBytes`), what a decode that cannot stream holds, the read-ahead readers'
    /// buffers (`readers`), one set for each pass of a windowed decode, and the largest encode.
    static func inputEstimate(_ planBytes: Int64, passes: Int, unstreamed: Int64, readers: Int64, encoding: Int64) -> Int64 {
        planBytes + unstreamed + Int64(passes) * readers + encoding
    }

    /// The estimate for the `frames` decoded frames of `decodeSize`: the decoded image and each
    /// output's image, or the larger one a step of it holds whole as it works (a smart crop's
    /// scaled image, `ImageProcessing.workingSize(for:)`), at 4 bytes a pixel. An output without
    /// steps is the decoded image itself (`StepChain` renders it into memory, where it already
    /// is, an animation's fields already its own), so it adds nothing.
    static func imageBytes(decodeSize: ImageSize, outputs: [OutputDefinition], frames: Int = 1) -> Int64 {
        let outputPixels = outputs.reduce(0) { total, output in
            guard !output.steps.isEmpty else { return total }
            var size = decodeSize
            var held = 0
            for step in output.steps {
                held = max(held, step.workingSize(for: size).pixelCount)
                size = step.outputSize(for: size)
            }
            return total + max(held, size.pixelCount)
        }
        return Int64(decodeSize.pixelCount + outputPixels) * 4 * Int64(frames)
    }

    /// What the most demanding `lanes` of `outputs`' encoders hold while they write their images,
    /// made from a decode of `decodeSize` (`OutputDefinition.encodingBytes(size:alpha:)`; `alpha`:
    /// the input has an alpha band, taken to reach the outputs): an input's outputs are encoded
    /// side by side, one on each of the encode stage's lanes. An animation of `frames` frames is
    /// encoded whole by the GIF and WebP outputs that animate; an AVIF sequence is encoded a
    /// frame at a time (`EncoderSettings.workingBytes(framePixels:frames:alpha:)`).
    static func encodingBytes(decodeSize: ImageSize, alpha: Bool, outputs: [OutputDefinition], frames: Int = 1, lanes: Int = 1) -> Int64 {
        let each = outputs.map { output in
            output.encodingBytes(size: output.steps.reduce(decodeSize) { $1.outputSize(for: $0) }, alpha: alpha, frames: frames)
        }
        return each.sorted(by: >).prefix(max(1, lanes)).reduce(0, +)
    }

    /// What the loader holds at full size before any row comes out, for a decode that cannot
    /// stream: an interlaced PNG is read whole (libvips renders its passes into one image), and
    /// a progressive JPEG keeps every DCT coefficient (2 bytes each, chroma as subsampled) even
    /// when it shrinks on load. 0 for decodes that stream row by row.
    static func unstreamedDecodeBytes(_ header: VipsImage) -> Int64 {
        guard header.intField("interlaced") == 1 else { return 0 }
        let pixels = Int64(header.width) * Int64(header.height)
        if header.loader?.hasPrefix("jpegload") == true {
            let chroma: Double =
                switch header.stringField("jpeg-chroma-subsample") {
                case "4:2:0": 0.5
                case "4:2:2", "4:4:0": 1
                default: header.bands > 1 ? Double(header.bands - 1) : 0
                }
            return Int64(Double(pixels) * (1 + chroma) * 2)
        }
        // The image at its own depth: about what an interlaced PNG holds above the same file
        // not interlaced, counted on the safe side.
        return pixels * Int64(header.bands) * Int64(header.bandFormat == .uchar ? 1 : 2)
    }

    /// What a loader that never streams holds at full size, whatever the shrink after it: the
    /// GIF loader draws each frame into a frame buffer of the whole canvas (4 bytes a pixel),
    /// and libheif (HEIC, AVIF) and libjxl decode the whole image before libvips has a row
    /// (`wholeImageBytesPerPixel`). Counted in an input's estimate against the memory budget,
    /// not in the target that spaces out progressive JPEGs and interlaced PNGs
    /// (`MemoryAccountant.unstreamedDecodes`): a run of phone photos would then decode one at a
    /// time. 0 for other loaders.
    static func wholeImageDecodeBytes(_ header: VipsImage) -> Int64 {
        let pixels = Int64(header.width) * Int64(header.height)
        let loader = header.loader ?? ""
        if loader.hasPrefix("gifload") { return pixels * 4 }
        guard loader.hasPrefix("heifload") || loader.hasPrefix("jxlload") else { return 0 }
        return pixels * wholeImageBytesPerPixel * (header.bandFormat == .uchar ? 1 : 2)
    }

    /// Whether `header`'s decode streams row by row, so that a window of it can be decoded in
    /// passes: not when the loader holds the full-size image first (`unstreamedDecodeBytes`,
    /// `wholeImageDecodeBytes`), which each pass would decode again.
    static func streams(_ header: VipsImage) -> Bool {
        unstreamedDecodeBytes(header) == 0 && wholeImageDecodeBytes(header) == 0
    }

    /// What libheif and libjxl hold for each pixel of an 8-bit image they decode whole, on the
    /// safe side of what a 46-megapixel HEIC and JPEG XL were measured to peak at (8.4 and 8.1
    /// bytes a pixel, the process's own memory included): the decoded planes, the interleaved
    /// image libvips is given, and libvips' copy of it. Twice as much above 8 bits.
    static let wholeImageBytesPerPixel: Int64 = 8

    /// What libvips' resize keeps in rows of full width while a very wide image streams down to
    /// `decodeSize`: on a sequential input its `shrinkv` and `reducev` each add a line cache of
    /// their own, and the sink holds strips, all as wide as the image the reduce starts from
    /// (after the rows' box-shrink of `VipsImage.resampled(to:)`); a streamed decode cannot hand
    /// libvips anything narrower, but a window cut from the rows first is narrower
    /// (`DecodePlan`). Counted at 4 bytes a pixel, as the rest of the estimate is, and never
    /// more rows than the image has; 0 below `wideRowsMargin` and for a loader that makes the
    /// image straight at its size (`DecodePlan.drawsAtScale`).
    static func wideRowsBytes(size: ImageSize, decodeSize: ImageSize, loader: String) -> Int64 {
        guard !DecodePlan.drawsAtScale(loader), decodeSize.width > 0 else { return 0 }
        let rowShrink = max(1, size.width / (decodeSize.width * 2))
        let bytes = Int64(size.width / rowShrink) * 4 * min(wideRowsHeld, Int64(size.height))
        return bytes >= wideRowsMargin ? bytes : 0
    }

    /// Rows of the reduce's starting width that libvips 8.14's resize keeps (`wideRowsBytes`),
    /// as measured on very wide PNGs streamed to a cover crop (the peak grew by this many rows
    /// with the width).
    static let wideRowsHeld: Int64 = 1050

    /// Below this, the wide rows are within the estimate's margin (the rows of a photograph)
    /// and are not counted.
    static let wideRowsMargin: Int64 = 32_000_000
}
