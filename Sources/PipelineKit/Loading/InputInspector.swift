import Foundation
import Vips

/// What an input is, as a run would find it, without making any output: its size, format, alpha
/// and orientation from its header, and the placeholders the pipeline file declares for it
/// (`pipeline serve`'s `/info/{input}`).
///
/// The input is read as a run reads it: fetched through the fetch and cache stages (the file's
/// `fetch` limits, its cache), and its header read through the decoder's checks (the formats the
/// file permits, `decompress.maxPixels`, `failOn`). Only placeholders need pixels: then the image
/// is decoded shrunk on load to a few hundred pixels, within `decompress.timeout`, as a run
/// decodes, and admitted by the memory budget the runs share, as a run's decode is. Blocking
/// work runs on lanes of the inspector's own, as wide as the file's stages.
public struct InputInspector: Sendable {
    /// An input fetched (a local file checked where it lies; a remote one downloaded or taken
    /// from the cache), ready for `info(of:placeholders:)`.
    public struct Fetched: Sendable {
        let input: InputFile
        let source: FetchedSource
        /// What identifies the version of the bytes fetched (a file's size, time and inode; a
        /// response's validator), or nil when nothing does.
        public var version: String? { source.version }
    }

    /// The longest side placeholders are made from: above the largest they fit within (the
    /// ThumbHash's 100 pixels), so that they are resampled down as a run's are.
    static let placeholderSide = 256

    private let queues: StageQueues
    private let sources: SourceLoader
    private let decompress: DecompressSettings
    /// The memory budget the decodes for placeholders are admitted by, with the runs'.
    private let memory: MemoryAccountant?

    /// An inspector of `plan`'s inputs, fetching as `pipeline`'s runs do: through `dataLoader`
    /// (by default libcurl with the file's `fetch` settings) and `cache` (by default the file's
    /// disk cache), on the queues of `stages` when given (those its runs share), else its own;
    /// a decode for placeholders is admitted by `memory`, the budget its runs share, when given.
    public init(
        pipeline: Pipeline, plan: RunPlan, dataLoader: (any DataLoading)? = nil, cache: (any DataCaching)? = nil,
        stages: SharedStages? = nil, memory: SharedMemoryBudget? = nil
    ) {
        self.memory = memory?.accountant
        let definition = plan.definition
        queues = stages?.queues ?? StageQueues(definition) { _ in }
        sources = SourceLoader(
            definition, queues: queues, dataLoader: dataLoader ?? pipeline.defaultDataLoader(), cache: cache ?? pipeline.defaultCache(),
            stores: plan.stores)
        decompress = definition.decompress
    }

    /// Fetches `input` as a run's fetch stage does.
    ///
    /// - Throws: `ItemError` of the fetch stage (a file too large or unreadable, a URL that
    ///   could not be fetched), or `CancellationError`.
    public func fetch(_ input: InputFile) async throws -> Fetched {
        Fetched(input: input, source: try await sources.load(input))
    }

    /// What `fetched` is: its header's facts, and the placeholders of `placeholders` (each made
    /// with its settings), computed from the image decoded small when any is asked for.
    ///
    /// - Throws: `ItemError` of the decompress stage when the image cannot be read as a run
    ///   would read it, of the process stage when a placeholder cannot be made; or
    ///   `CancellationError`.
    public func info(of fetched: Fetched, placeholders: [PlaceholderKind: PlaceholderSettings] = [:]) async throws -> InputInfo {
        let name = fetched.input.displayName
        let source = fetched.source.source
        let decoder = ImageDecoder(settings: decompress, outputs: [])
        let header = try await queues.fetch.run(for: name) { try decoder.header(of: source) }
        var info = InputInfo(
            width: header.upright.width, height: header.upright.height, format: header.format, hasAlpha: header.hasAlpha,
            orientation: header.orientation)
        guard !placeholders.isEmpty else { return info }
        let (small, frames) = (
            ImageDecoder(settings: decompress, outputs: [Self.placeholderOutput]),
            ImageDecoder(settings: decompress, outputs: [Self.placeholderFramesOutput])
        )
        // A file that cannot shrink on load (an interlaced PNG) is decoded whole: weighed as a run's decode is.
        let estimate = try await queues.fetch.run(for: name) {
            [small, frames].compactMap { $0.look(at: source, estimatingFor: { _ in nil })?.needs?.estimate }.max()
        }
        let admitted = try await admit(estimate)
        defer { if admitted > 0 { memory?.admission?.release(admitted) } }
        info.placeholders = try await queues.decompress.run(for: name) { () throws(ItemError) -> Placeholders in
            let first = try small.decode(source).image
            return try Self.placeholders(of: Self.firstSeenFrame(first, of: source, decodedBy: frames), placeholders)
        }
        return info
    }

    /// Waits until `estimate` fits in the memory budget beside the runs and the other reads,
    /// and admits it; the bytes admitted, which are to be released, or 0 without a budget.
    private func admit(_ estimate: Int64?) async throws -> Int64 {
        guard let estimate, let budget = memory?.budget, let admission = memory?.admission else { return 0 }
        guard admission.fits(estimate) else {
            throw ItemError(
                .overMemoryBudget, stage: .decompress,
                reason: "decoding it for its placeholders needs about \(MemoryBudget.megabytes(estimate)), more than the "
                    + "whole memory budget: \(budget)")
        }
        guard await admission.admit(estimate) else { throw CancellationError() }
        return estimate
    }

    /// `first`, the first frame, when anything of it is seen; else, for an animation whose
    /// frames the file keeps, its first frame in which anything is, as a manifest's
    /// placeholders are taken from an animated output: decoded again, every frame kept.
    private static func firstSeenFrame(_ first: VipsImage, of source: EncodedSource, decodedBy frames: ImageDecoder) throws(ItemError)
        -> VipsImage
    {
        func failure(_ error: VipsError) -> ItemError {
            ItemError(.processing, stage: .process, reason: "placeholders: \(error)", underlying: error)
        }
        do throws(VipsError) {
            guard try !Placeholders.showsAnything(first) else { return first }
        } catch {
            throw failure(error)
        }
        let decoded = try frames.decode(source)
        guard decoded.frameCount > 1 else { return first }
        do throws(VipsError) {
            let pages = try decoded.image.pages()
            return try Placeholders.firstSeenFrame(count: pages.count) { index throws(VipsError) in pages[index] }
        } catch {
            throw failure(error)
        }
    }

    /// The placeholders of `kinds` for `image`: those sharing settings computed together.
    private static func placeholders(of image: VipsImage, _ kinds: [PlaceholderKind: PlaceholderSettings]) throws(ItemError)
        -> Placeholders
    {
        var made = Placeholders()
        for settings in Set(kinds.values) {
            let group = Set(kinds.filter { $0.value == settings }.keys)
            let values: Placeholders
            do {
                values = try Placeholders(of: image, kinds: group, settings: settings)
            } catch {
                throw ItemError(.processing, stage: .process, reason: "placeholders: \(error)", underlying: error)
            }
            for kind in group { made[kind] = values[kind] }
            made.transparent = values.transparent
        }
        return made
    }

    /// The placeholders `definition`'s outputs declare for `input` (those whose `"inputs"` leave
    /// it out declare none for it), each with the settings of the first output in the file that
    /// declares it.
    public static func placeholders(declaredFor input: InputFile, in definition: PipelineDefinition) -> [PlaceholderKind:
        PlaceholderSettings]
    {
        var declared: [PlaceholderKind: PlaceholderSettings] = [:]
        for output in definition.outputs where !output.placeholders.isEmpty {
            if let subset = output.inputSubset,
                !subset.contains(input, baseDirectory: definition.baseDirectory, caseInsensitive: definition.caseInsensitive)
            {
                continue
            }
            for kind in output.placeholders where declared[kind] == nil { declared[kind] = output.placeholderSettings }
        }
        return declared
    }

    /// The one output the placeholders' decode is for: it lets the decoder shrink on load to
    /// `placeholderSide`, and keeps no animation.
    static let placeholderOutput = OutputDefinition(
        name: "placeholders", steps: [PlaceholderShrink(side: placeholderSide)], encoder: EncoderSettings(format: .png),
        path: PathTemplate(literal: "placeholders"))

    /// `placeholderOutput` as an animation: the decoder keeps every frame (within
    /// `decompress.maxFrames`), for an animation that opens on a clear frame.
    static let placeholderFramesOutput = OutputDefinition(
        name: "placeholders", steps: [PlaceholderShrink(side: placeholderSide)], encoder: EncoderSettings(format: .webp),
        path: PathTemplate(literal: "placeholders"))
}

/// What `/info/{input}` answers: an input's header facts and its placeholders.
public struct InputInfo: Sendable, Equatable {
    /// The width the run turns the image to: upright when `decompress.autorotate` (the default)
    /// applies the EXIF orientation, else as stored.
    public var width: Int
    /// The height, as `width`.
    public var height: Int
    /// The container's format, as the project names formats (`jpeg`, `png`, `webp`, `avif`,
    /// `heic`, `gif`, `tiff`, `jxl`; `svg` or `pdf` when the file permits them).
    public var format: String
    /// Whether the image has an alpha band.
    public var hasAlpha: Bool
    /// The EXIF orientation, 1 to 8 (1 when the file has none).
    public var orientation: Int
    /// The placeholders asked for, or nil when none was.
    public var placeholders: Placeholders?

    /// Facts with no placeholders.
    public init(width: Int, height: Int, format: String, hasAlpha: Bool, orientation: Int, placeholders: Placeholders? = nil) {
        self.width = width
        self.height = height
        self.format = format
        self.hasAlpha = hasAlpha
        self.orientation = orientation
        self.placeholders = placeholders
    }
}

/// The step of `InputInspector`'s decode: none in a pipeline file. It lets the decoder shrink
/// an image to fit `side` on its longer side, as an output's resize does.
struct PlaceholderShrink: ImageProcessing {
    static let name = "placeholderShrink"
    static let summary = "shrinks on load for placeholders"
    static let options: [Option] = []

    let side: Int

    init(side: Int) { self.side = side }

    init(options: ProcessorOptions) throws(OptionError) { side = InputInspector.placeholderSide }

    var identifier: String { "placeholderShrink(\(side))" }

    func outputSize(for size: ImageSize) -> ImageSize { size }

    func allowedInputShrink(for size: ImageSize) -> Double {
        max(1, Double(max(size.width, size.height)) / Double(side))
    }

    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage { image }
}

extension PathTemplate {
    /// A template of `text` alone, with no placeholder: for an output no file writes.
    init(literal text: String) {
        self.text = text
        pieces = [.literal(text)]
    }
}
