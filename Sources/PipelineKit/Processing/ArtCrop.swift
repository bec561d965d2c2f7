import Foundation
import Vips

/// The resize of an art direction crop (`ArtDirection`): the largest window of the entry's
/// ratio the image holds, no wider than the variant's width, cropped at the output's resize
/// position (compass point, smart crop, focal point) by the output's own resize step.
///
/// The box is worked out per image: a plain cover resize that may not enlarge crops each side
/// to the image on its own, so a square crop of a landscape photo narrower than the width asked
/// for would come out as wide as the photo, not square.
struct ArtCrop: ImageProcessing {
    static let name = "resize"
    static let summary = "an art direction crop: the output's resize, cover, at the entry's aspect ratio"
    static let options: [Option] = []

    /// The width asked for.
    let width: Int
    /// Width over height.
    let ratio: Double
    /// The output's resize step for a box, fit cover; nil when its options do not build one.
    let resize: @Sendable (ImageSize) -> (any ImageProcessing)?
    /// The resize built for the width asked for, checked when the file was read.
    let full: any ImageProcessing

    init(options: ProcessorOptions) throws(OptionError) {
        throw OptionError(option: nil, "an art crop is made from an output's art entry, not named as a step")
    }

    init(width: Int, ratio: Double, full: any ImageProcessing, resize: @escaping @Sendable (ImageSize) -> (any ImageProcessing)?) {
        self.width = width
        self.ratio = ratio
        self.full = full
        self.resize = resize
    }

    /// The crop's size for an image of `size`: the ratio's largest window in it, at most `width`
    /// wide. A window less than a pixel across is one pixel across and no longer than the image.
    func box(for size: ImageSize) -> ImageSize {
        let widest = Self.widestWindow(in: size, ratio: ratio)
        let cropWidth = max(1, min(width, widest))
        // A window as tall as the image is cut from it as it is: a height rounded a pixel short
        // of the image's would resample the whole crop for a ratio no nearer than a pixel.
        if cropWidth == max(1, widest), widest < size.width { return ImageSize(width: cropWidth, height: size.height) }
        // Bounded before it is made whole: a ratio of 1:10²⁰ would give no integer.
        let height = min(Double(size.height), (Double(cropWidth) / ratio).rounded())
        return ImageSize(width: cropWidth, height: max(1, Int(height)))
    }

    /// The width of the widest window of `ratio` (width ÷ height) in an image of `size`, in whole
    /// pixels, bounded by the image's width before it is made whole, so that a ratio of any size
    /// gives one.
    static func widestWindow(in size: ImageSize, ratio: Double) -> Int {
        Int(min(Double(size.width), (Double(size.height) * ratio).rounded(.down)))
    }

    private func step(for size: ImageSize) throws -> any ImageProcessing {
        let box = box(for: size)
        if box.width == width, box.height == full.outputSize(for: size).height { return full }
        guard let step = resize(box) else {
            throw OptionError(option: nil, "the output's resize cannot crop to \(box)")
        }
        return step
    }

    var identifier: String { "art(width:\(width),ratio:\(ratio),\(full.identifier))" }

    func outputSize(for size: ImageSize) -> ImageSize { box(for: size) }

    func workingSize(for size: ImageSize) -> ImageSize { (try? step(for: size))?.workingSize(for: size) ?? box(for: size) }

    func allowedInputShrink(for size: ImageSize) -> Double {
        let allowed = (try? step(for: size))?.allowedInputShrink(for: size) ?? 1
        // The window is worked out again on the decoded image, which must be tall enough for the
        // crop's whole width: the crop's height rounded up, where the resize rounds it to the
        // nearest pixel.
        let tallEnough = Double(size.height) / max(1, (Double(box(for: size).width) / ratio).rounded(.up))
        return max(1, min(allowed, tallEnough))
    }

    func decodeWindow(for size: ImageSize) -> DecodeWindow? {
        (try? step(for: size))?.decodeWindow(for: size)
    }

    var resources: [URL] { full.resources }

    /// Every crop of the entry is the output's resize at another box, which may crop about the
    /// input's focus point: the point is then part of the crop's fingerprint, as it is of the
    /// output's own files.
    var readsFocusPoint: Bool { full.readsFocusPoint }

    func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint {
        (try? step(for: input))?.movedPoint(point, from: input, to: result) ?? point
    }

    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        try step(for: ImageSize(width: image.width, height: image.height)).process(image, context: context)
    }

    func processFrames(_ frames: VipsImage, context: ProcessingContext) throws -> VipsImage? {
        let frameHeight = frames.pageHeight
        return try step(for: ImageSize(width: frames.width, height: frameHeight)).processFrames(frames, context: context)
    }
}
