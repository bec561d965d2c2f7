import Foundation
import Vips

/// What a run would do, worked out from the plan and from image headers only (no decoding):
/// the content of `pipeline explain`.
public struct PlanExplanation: Sendable {
    /// One sampled input, from its header.
    public struct Sample: Sendable {
        /// The input's name, as reports name it.
        public let input: String
        /// The file's format, named as outputs name formats (`jpeg`, `png`, `heic`); nil when the
        /// header cannot be read.
        public let format: String?
        /// Upright size from the header.
        public let size: ImageSize?
        /// JPEG shrink-on-load factor the decoder will use (1 for none).
        public let loadShrink: Int
        /// The size decoding produces: what the largest output needs.
        public let decodeSize: ImageSize?
        /// Why the run refuses the file before or as its header is read (an empty file, a PNG
        /// whose compressed text inflates past the limit), as the run tells it: its stage, then
        /// why (`decompress: …`).
        public var refusal: String? = nil
        /// Bytes the decode holds at full size because it cannot stream (an interlaced PNG, a
        /// progressive JPEG), or 0.
        public var unstreamedBytes: Int64 = 0
        /// Bytes a loader that decodes the whole image holds, whatever the outputs need (a GIF's
        /// frame buffer, a HEIC, AVIF or JPEG XL), or 0.
        public var wholeImageBytes: Int64 = 0
        /// Bytes the decode holds when it reads a PNG whole (faster, with libdeflate), or 0
        /// when it streams. Read whole only while the allowance for such reads has room.
        public var wholePNGBytes: Int64 = 0
        /// What a large TIFF's strips decoded ahead hold, or 0 when it is read by libvips' loader.
        public var stripReadAheadBytes: Int64 = 0
        /// Whether those strips are too large to hold whole, so their rows are decoded a part
        /// of a strip at a time, by one worker.
        public var stripsReadRowByRow = false
        /// What a large PNG's rows decoded ahead hold when it is not read whole, or 0 when
        /// libvips' loader streams it.
        public var pngRowsAheadBytes: Int64 = 0
        /// What libvips' resize keeps in full-width rows of a very wide image, or 0 when that
        /// is within the estimate's margin: it grows with the image's width.
        public var wideRowsBytes: Int64 = 0
        /// Outputs that decode the window they keep alone, in a pass over the file each
        /// (`DecodePlan`): the image is too wide or tall to decode once for all.
        public var windowedOutputs: [String] = []
        /// Whether some output fans out from the image at `decodeSize` (false when every
        /// output decodes a window of its own).
        public var decodesWhole = true
        /// The frames of an animated GIF or WebP whose frames are kept (`decompress.animation`)
        /// for a GIF or WebP output, or that is refused for its frames (`frameRefusal`); nil
        /// when only its first frame is decoded, or it is not an animation.
        public var keptFrames: Int?
        /// Why the animation is refused for its frames ("more than decompress.maxFrames (1000)"),
        /// or nil.
        public var frameRefusal: String?
        /// `keptFrames` in words, when it is not the number alone: "over 4096" where even the
        /// GIF's blocks could not be counted.
        public var frameText: String?
    }

    /// Inputs the run would make, every listing counted.
    public let inputs: Int
    /// The shard the plan keeps, where it came from, and the inputs of all shards together.
    public let shard: (shard: Shard, source: String, totalInputs: Int)?
    /// Distinct sources among the inputs (one file listed twice is one source).
    public let sources: Int
    /// What the plan warns of, as `validate` and `run` print it (a glob that matches no file, a
    /// key under an old name): not part of `text`, which is the plan.
    public let warnings: [String]
    /// The inputs, and outputs of inputs, the run would refuse before any work, as it names them
    /// (`RunPlan.refusals`): not part of `text`, which is what the run makes.
    public let refusals: [String]
    /// Inputs fetched over HTTP(S) or from S3.
    public let remoteInputs: Int
    /// Formats (`jpeg`, `png`) and how many inputs are of each, among those whose header was read.
    public let formats: [String: Int]
    /// The first inputs whose header was read, each as the decoder would take it.
    public let samples: [Sample]
    /// One line an output (one for all the widths and formats of a responsive set): its steps,
    /// encoder and path.
    public let outputs: [String]
    /// Each stage and the lanes it runs on.
    public let stageWidths: [(Stage, Int)]
    /// The most inputs under way at once.
    public let inFlight: Int
    /// `decompress.maxPixels`: an image with more is refused.
    let maxPixels: Int
    /// The outputs that keep an animation's frames (WebP, AVIF) and search for a quality: a
    /// quality target scores still images, so they fail for an animated input.
    let animatedSearches: [String]
    /// Bytes of decoded and processed images that may be in memory at once, from the largest
    /// decode size seen: `inFlight` × (decoded image + each output's image), 4 bytes a pixel.
    /// An upper bound, not a forecast: it counts every input in flight as the largest, each
    /// wholly decoded at once, where libvips streams most decodes.
    public let estimatedPeakImageBytes: Int64
    /// What the run admits at most: `estimatedPeakImageBytes`, or the memory budget when that is
    /// lower (an input starts decoding only while the estimates of those being made fit in it).
    public var imageMemoryBound: Int64 {
        guard let memoryBudget else { return estimatedPeakImageBytes }
        return min(estimatedPeakImageBytes, memoryBudget.bytes)
    }
    /// The part of the estimate that downloads may add (`inFlight` × `fetch.maxBytes`) when
    /// inputs are remote.
    public let estimatedPeakDownloadBytes: Int64

    /// The memory budget (`--max-memory`, the cgroup, RLIMIT_AS), or nil when none is set.
    public let memoryBudget: MemoryBudget?
    /// The largest estimate of one input among the headers read: what it holds while decoded
    /// and made into every output.
    public let largestInputEstimate: Int64
    /// Inputs, among the headers read, whose estimate alone exceeds the budget: the run fails them.
    public let inputsOverBudget: Int
    /// Inputs, among the headers read, whose decode cannot stream (interlaced PNG, progressive
    /// JPEG): they hold their full size in memory while decoded, whatever the outputs' sizes.
    public let unstreamedInputs: Int
    /// Inputs, among the headers read, that are PNGs read whole when the allowance has room.
    public let wholePNGInputs: Int
    /// What the PNGs read whole may hold together in this run (less under a memory budget).
    public let wholePNGCapacity: Int64
    /// Inputs, among the headers read, that are TIFFs whose strips are decoded ahead.
    public let stripReadAheadInputs: Int
    /// The run's memory account: the admission and every allowance within the budget, who may
    /// take from each, and why it is that size (`MemoryAccountant`).
    public let memoryAccount: [MemoryAllowance]

    /// Inputs, among the headers read, that only an untrusted loader the file does not allow
    /// would read (SVG, PDF): the run refuses them (`decompress.allowUntrusted`).
    public var untrustedRefused = 0
    /// The untrusted formats the file allows (`decompress.allowUntrusted`).
    public var allowedUntrusted: [String] = []

    /// Headers are read for at most this many local inputs (all of them in smaller runs).
    public static let headerLimit = 2000

    init(plan: RunPlan, shardSource: String? = nil, memoryBudget: MemoryBudget? = MemoryBudget.detect(), sampleCount: Int = 5) {
        let definition = plan.definition
        warnings = plan.warnings
        refusals = plan.refusals
        shard = plan.shard.map { ($0, shardSource ?? "given", plan.totalInputCount) }
        self.memoryBudget = memoryBudget
        let accountant = MemoryAccountant(budget: memoryBudget)
        let decoder = ImageDecoder(
            settings: definition.decompress, outputs: definition.outputs, accountant: accountant, encodeLanes: definition.encode.concurrency
        )
        inputs = plan.inputCount
        sources = plan.items.count
        remoteInputs = plan.items.refs.filter(\.isRemote).count
        allowedUntrusted = DecompressSettings.UntrustedFormat.allCases.filter(definition.decompress.allowUntrusted.contains).map(\.rawValue)
        var survey = HeaderSurvey(definition: definition, decoder: decoder, memoryBudget: memoryBudget, sampleCount: sampleCount)
        for item in plan.items.lazy.filter({ !$0.input.isRemote }).prefix(Self.headerLimit) {
            survey.read(item.input, applicable: RunPlan.outputsMade(for: item.listings, outputCount: definition.outputs.count))
        }
        untrustedRefused = survey.untrustedRefused
        formats = survey.formats
        samples = survey.samples
        outputs = Self.outputLines(definition)
        stageWidths = [
            (.fetch, definition.fetch.concurrency), (.cache, definition.cache.concurrency),
            (.decompress, definition.decompress.concurrency), (.process, definition.process.concurrency),
            (.encode, definition.encode.concurrency),
        ]
        inFlight = definition.inFlight(fetchingRemoteInputs: remoteInputs > 0)
        maxPixels = definition.decompress.maxPixels
        var searching: Set<String> = []
        animatedSearches = definition.outputs.filter { output in
            [.webp, .avif].contains(output.encoder.format) && output.encoder.qualityTarget != nil && searching.insert(output.name).inserted
        }.map(\.name)
        estimatedPeakImageBytes = Int64(inFlight) * survey.largestEstimate
        largestInputEstimate = survey.largestEstimate
        inputsOverBudget = survey.inputsOverBudget
        unstreamedInputs = survey.unstreamedInputs
        wholePNGInputs = survey.wholePNGInputs
        wholePNGCapacity = accountant.wholePNGReads.capacity
        memoryAccount = accountant.allowances
        stripReadAheadInputs = survey.stripReadAheadInputs
        estimatedPeakDownloadBytes = remoteInputs > 0 ? Int64(inFlight) * definition.fetch.maxBytes : 0
    }

    /// One line an output: its steps, encoder and path; one for all the widths and formats of a
    /// responsive set.
    private static func outputLines(_ definition: PipelineDefinition) -> [String] {
        var seen: Set<String> = []
        return definition.outputs.filter { seen.insert($0.name).inserted }.map { output in
            // An output that chooses its inputs says which.
            let only = output.inputSubset.map { " (only inputs " + $0.patterns.map(\.quotedValue).joined(separator: ", ") + ")" } ?? ""
            guard let variant = output.variant else {
                let steps = shownSteps(output.steps, redaction: definition.fetch.redaction)
                return
                    "\(output.name): \(steps.isEmpty ? "no steps" : steps) → \(output.encodingDescription) → \(output.path.text)\(only)"
            }
            return Self.responsiveLine(
                definition.outputs.filter { $0.variant?.group == variant.group }, redaction: definition.fetch.redaction) + only
        }
    }

    /// One line for an output with widths and formats: each width, each encoder, and the steps
    /// with the width as `{width}`.
    private static func responsiveLine(_ variants: [OutputDefinition], redaction: CredentialRedaction) -> String {
        guard let first = variants.first, let variant = first.variant else { return "" }
        var widths: [String] = []
        var encoders: [String] = []
        for output in variants where output.variant?.art == nil {
            let width = output.variant?.width.map(String.init) ?? "original"
            if !widths.contains(width) { widths.append(width) }
            let encoder = "\(output.encoder.format.rawValue) (\(output.encoder.explained))"
            if !encoders.contains(encoder) { encoders.append(encoder) }
        }
        let sized = variants.first { $0.variant?.width != nil }
        var steps = shownSteps((sized ?? first).steps, redaction: redaction)
        if let width = sized?.variant?.width { steps = steps.replacingOccurrences(of: "(width:\(width),", with: "(width:{width},") }
        let enlargement =
            widths.count > 1 || variant.width != nil
            ? (variant.enlarges ? ", enlarged when wider than the image" : ", none wider than the image (its own width stands in, once)")
            : ""
        // An art crop is a window of the image, never enlarged: said where the output's own
        // widths are, so that its widths are not read as made past the window.
        let art = first.art.map { entry in
            "; art \(entry.aspectRatio) for \(entry.media) at \(entry.widths.map(String.init).joined(separator: ", "))"
                + (variant.enlarges ? ", none wider than its window (never enlarged)" : "")
        }
        return "\(first.name): widths \(widths.joined(separator: ", "))\(enlargement)\(art.joined()); "
            + "formats \(encoders.joined(separator: ", ")): \(steps.isEmpty ? "no steps" : steps) → \(first.path.text)"
    }

    /// `steps` by their identifiers, the URLs each loads (an overlay's) redacted as every URL is
    /// shown. The identifiers keep the URLs whole: fingerprints must tell two signatures apart.
    private static func shownSteps(_ steps: [any ImageProcessing], redaction: CredentialRedaction) -> String {
        steps.map { step in
            step.resources.filter { !$0.isFileURL }.reduce(step.identifier) { text, url in
                text.replacingOccurrences(of: url.absoluteString, with: redaction.redact(url.absoluteString))
            }
        }.joined(separator: " → ")
    }
}

extension Pipeline {
    /// Plans the run and reads headers (no pixels) to say what it would do.
    ///
    /// - Parameters:
    ///   - shard: explain only this shard's inputs.
    ///   - shardSource: how the shard was chosen (the command line, a scheduler's variables), to show.
    public func explain(shard: Shard? = nil, shardSource: String? = nil) throws(PipelineFileError) -> PlanExplanation {
        PlanExplanation(plan: try plan(shard: shard), shardSource: shardSource, memoryBudget: memoryBudget())
    }
}
