public import Foundation
public import Vips

/// A processor plugin: one step of an output's chain (resize, crop, blur, …).
///
/// A processor is built from its JSON options, which the pipeline has already checked against
/// `options` (types, ranges, unknown keys), so `init(options:)` only checks what one option
/// cannot say alone (for example "width or height is required") by throwing `OptionError`.
public protocol ImageProcessing: Sendable {
    /// The step's key in a pipeline file, for example `"resize"`.
    static var name: String { get }
    /// One line for `pipeline plugins` and the JSON Schema.
    static var summary: String { get }
    /// Every option the step accepts: the validator, the typed accessors and the schema all read these.
    static var options: [Option] { get }

    /// Whether the step takes keys beyond `options`, which `init(options:)` then checks itself
    /// through `ProcessorOptions.undeclared` (the `vips` step: any libvips operation's arguments).
    /// The default is false: an unknown key is an error with a near-miss suggestion.
    static var acceptsUndeclaredOptions: Bool { get }

    /// Builds the step from its options in a pipeline file, already checked against `options`;
    /// throws what one option alone cannot say is wrong.
    init(options: ProcessorOptions) throws(OptionError)

    /// A stable description of the step and its settings, for logs, caches and coalescing.
    /// `explain` shows it with each of `resources` written as its `absoluteString` in it
    /// redacted (`CredentialRedaction`); fingerprints take it as it is, telling two URLs apart.
    var identifier: String { get }

    /// The size this step produces from an input of `size`, so the planner can size decoding.
    func outputSize(for size: ImageSize) -> ImageSize

    /// The largest image this step holds whole while it works on an input of `size`, for the
    /// memory estimate: its output by default. A cover resize at a smart position looks at the
    /// whole image scaled to cover the box, before its crop.
    func workingSize(for size: ImageSize) -> ImageSize

    /// How much smaller than `size` the decoder may make this step's input without changing its
    /// result beyond resampling: a resize to a quarter of the width allows 4. The default, 1,
    /// means the step needs the full-size image.
    func allowedInputShrink(for size: ImageSize) -> Double

    /// The part of an input of `size` this step keeps, when it keeps less than the whole (a
    /// cover resize at a compass position crops a window), and the size that part becomes: given
    /// that part at that size, the step makes what it makes from the whole image. nil (the
    /// default) means the step needs the whole image. For a very wide or tall image the decoder
    /// then decodes the window alone for this output (`DecodeWindow`).
    func decodeWindow(for size: ImageSize) -> DecodeWindow?

    /// Other images the step needs (an overlay for `composite`), as absolute file URLs or
    /// http(s) URLs. The runner fetches and decodes each once per run, through the fetch stage
    /// and the cache, and hands it over through `ProcessingContext.resource(_:)`.
    var resources: [URL] { get }

    /// Whether the step reads the input's point from the `focusPoints` file
    /// (`ProcessingContext.focusPoint`): the point is then part of what the output is made
    /// from, for the journal. The default is false.
    var readsFocusPoint: Bool { get }

    /// Where `point` of an input of `input` size (fractions of it) lies in the image of
    /// `result` size the step makes of it, so that a later crop about the input's focus point
    /// keeps what the point marks: a flop mirrors it, a crop moves it by what it cut away. The
    /// default leaves it in place, as a step that scales or filters the whole picture does.
    func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint

    /// Turns one image into another. A thrown error fails this item only.
    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage

    /// Turns every frame of an animation at once, or returns nil (the default) to be handed the
    /// frames one at a time through `process(_:context:)`. `frames` holds them stacked top to
    /// bottom, `pageHeight` rows each; the result holds the same frames in the same order, each
    /// as `process` would make it alone, with its page height set. Worth it for a step that can
    /// do all frames in a few libvips operations: building a graph of operations for each small
    /// frame costs more than its pixels.
    func processFrames(_ frames: VipsImage, context: ProcessingContext) throws -> VipsImage?
}

extension ImageProcessing {
    /// An unknown key is an error, with a near-miss suggestion.
    public static var acceptsUndeclaredOptions: Bool { false }
    /// The step's output: it holds nothing larger.
    public func workingSize(for size: ImageSize) -> ImageSize { outputSize(for: size) }
    /// 1: the step needs the full-size image.
    public func allowedInputShrink(for size: ImageSize) -> Double { 1 }
    /// nil: the step needs the whole image.
    public func decodeWindow(for size: ImageSize) -> DecodeWindow? { nil }
    /// None: the step needs no image beside its input.
    public var resources: [URL] { [] }
    /// false: the step does not read the input's focus point.
    public var readsFocusPoint: Bool { false }
    /// The point where it was: the step keeps the picture in place.
    public func movedPoint(_ point: FocusPoint, from input: ImageSize, to result: ImageSize) -> FocusPoint { point }
    /// nil: the step is handed an animation's frames one at a time.
    public func processFrames(_ frames: VipsImage, context: ProcessingContext) throws -> VipsImage? { nil }
}

/// What a processor may know about the item it works on.
public struct ProcessingContext: Sendable {
    /// The input being processed, as the pipeline file or the enumeration named it.
    public let input: String
    /// The name of the output whose chain is running.
    public let output: String
    /// The input's size before decoding shrank it, oriented upright.
    public let originalSize: ImageSize
    /// The most pixels an image may have (`decompress.maxPixels`); a step that could make a
    /// larger one fails instead.
    public let maxPixels: Int
    /// The input's point from the pipeline's `focusPoints` file, moved with the picture by the
    /// steps before this one (`ImageProcessing.movedPoint(_:from:to:)`); nil when the file has
    /// none for the input (or the pipeline has no such file): what `"position": "focus"` keeps.
    public let focusPoint: FocusPoint?
    /// Where a step says what the trace should show of its work on this item (a fallback).
    public let notes: ProcessingNotes
    /// Whether the step is handed the image as decoded (it is the output's first step): the
    /// input of `originalSize`, perhaps made smaller by the decoder, with each side rounded.
    /// False once another step has changed it.
    public let isDecodedImage: Bool
    private let resources: [URL: Result<VipsImage, ResourceError>]
    private let stopsWhen: @Sendable () -> Bool

    /// Whether the step should stop now and throw (any error): the input's time
    /// (`limits.itemTimeout`) has run out, or the run is stopping its work. libvips' own work
    /// stops by itself then; a step that works long in Swift (or waits on something) asks this
    /// between pieces of its work, or holds its lane, and the input, until it returns.
    public var shouldStop: Bool { stopsWhen() }

    /// A context for one step of `output` working on `input`, with the images its `resources`
    /// named, loaded, and the input's `focusPoint`; for its first step unless `isDecodedImage`
    /// says otherwise. `shouldStop` is what `shouldStop` asks (a test's own, say).
    public init(
        input: String, output: String, originalSize: ImageSize, maxPixels: Int = .max,
        resources: [URL: Result<VipsImage, ResourceError>] = [:], focusPoint: FocusPoint? = nil,
        notes: ProcessingNotes = ProcessingNotes(), isDecodedImage: Bool = true, shouldStop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.isDecodedImage = isDecodedImage
        stopsWhen = shouldStop
        self.input = input
        self.output = output
        self.originalSize = originalSize
        self.maxPixels = maxPixels
        self.resources = resources
        self.focusPoint = focusPoint
        self.notes = notes
    }

    /// This context for the step after `step`, which made an image of `result` size of one of
    /// `input` size: its input is no longer the image as decoded, and the focus point is where
    /// the step moved it.
    func after(_ step: any ImageProcessing, from input: ImageSize, to result: ImageSize) -> ProcessingContext {
        ProcessingContext(
            input: self.input, output: output, originalSize: originalSize, maxPixels: maxPixels, resources: resources,
            focusPoint: focusPoint.map { step.movedPoint($0, from: input, to: result) }, notes: notes, isDecodedImage: false,
            shouldStop: stopsWhen)
    }

    /// The decoded image behind one of the step's `resources`, loaded once for the whole run.
    public func resource(_ url: URL) throws(ResourceError) -> VipsImage {
        guard let result = resources[url] else {
            throw ResourceError(url: url, reason: "it was not loaded: the step did not list it in `resources`")
        }
        return try result.get()
    }
}

/// An image a step needs beside its input (an overlay) could not be loaded.
public struct ResourceError: Error, Sendable, CustomStringConvertible {
    /// The image that could not be loaded.
    public let url: URL
    /// Why, as the fetch or the decoder said.
    public let reason: String
    /// How messages name the image: its path, or its URL with the credentials in it hidden.
    public let displayName: String

    /// A failure to load `url`, for `reason`; the URL is named with the credentials in it hidden
    /// by `redaction`, as every URL is shown.
    public init(url: URL, reason: String, redaction: CredentialRedaction = CredentialRedaction()) {
        self.url = url
        self.reason = reason
        displayName = url.isFileURL ? url.path : redaction.redact(url.absoluteString)
    }

    /// The message the step fails with, naming the file or URL.
    public var description: String {
        "cannot load \(displayName): \(reason)"
    }
}

/// A width and height in pixels.
public struct ImageSize: Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size of `width` by `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Width times height.
    public var pixelCount: Int { width * height }
    /// `WIDTH×HEIGHT`, as messages quote sizes.
    public var description: String { "\(width)×\(height)" }
}

/// A part of an input that one output's first step keeps (`ImageProcessing.decodeWindow(for:)`),
/// in the input's upright pixels, and the size the decoder makes it.
///
/// An image decoded once for every output is decoded at the scale the most demanding output
/// needs, whole: for a very wide panorama with a small square cover output that is a strip
/// many times wider than the output, and libvips' resize keeps about a thousand rows of that
/// width on the way. Decoding the square window the cover keeps, in a pass of its own, holds
/// rows only as wide as the panorama is tall.
public struct DecodeWindow: Hashable, Sendable {
    /// The window's left edge, in the input's upright pixels.
    public var left: Int
    /// The window's top edge, in the input's upright pixels.
    public var top: Int
    /// The window's width, in the input's upright pixels.
    public var width: Int
    /// The window's height, in the input's upright pixels.
    public var height: Int
    /// The size the window is resampled to: what the step's resample would have made of it.
    public var size: ImageSize

    /// The window at `left`, `top` of `width` by `height` pixels, resampled to `size`.
    public init(left: Int, top: Int, width: Int, height: Int, size: ImageSize) {
        self.left = left
        self.top = top
        self.width = width
        self.height = height
        self.size = size
    }
}

extension VipsImage {
    /// The image's size in pixels.
    public var size: ImageSize { ImageSize(width: width, height: height) }
}

/// A processor option that is wrong in a way its definition alone cannot catch.
public struct OptionError: Error, Sendable, Equatable {
    /// The option at fault (the JSON key), or nil when it is about the options together.
    public let option: String?
    /// What is wrong, in words for the person who wrote the pipeline file.
    public let message: String
    /// The file the option names, when the error is about that file (not there, not readable,
    /// not what it should be): `watch` and `serve` read the pipeline file again when it changes.
    public var fileAtFault: String?

    /// An error about `option` (nil: about the options together), saying `message`; about the
    /// file at `fileAtFault` when the option names one that is not as it should be.
    public init(option: String?, _ message: String, fileAtFault: String? = nil) {
        self.option = option
        self.message = message
        self.fileAtFault = fileAtFault
    }
}
