import Foundation
import Vips

/// Finds, for one image and one encoder, the lowest quality whose SSIMULACRA 2 score against
/// the image as it stood before encoding reaches the target (`QualityTarget`).
///
/// The search starts from the target's `start` when the runner knows one (the journal's or a
/// neighbouring width's choice), else from a first guess made from the target and the image's
/// detail (for AVIF, moved by a pilot search at aom's fastest speed), and goes next where the
/// scores so far, taken as a line, reach the target (`Bracket`); it stops once the lowest passing and the highest failing quality are at most
/// `closeEnough(for:)` apart, once a passing trial's score is within that many steps' rise of
/// the target (and 1.5 points of it), or after 6 encodes (and then `max`, when none passed and
/// it was not tried). JPEG and AVIF trials go on with
/// chroma kept whole at every quality once one falls well short and 4:2:0 subsampling alone is
/// found to cost the image most of what the target allows. Trial encodes run one after
/// another, each scored and dropped unless it is the best file so far. A target no quality
/// reaches gives the best-scoring file and says so; it is not a failure.
enum QualitySearch {
    /// The most trial encodes for one image.
    static let maximumEncodes = 6
    /// The search stops once the bracket is this narrow, in qualities: 2, and 3 for AVIF, whose
    /// trials cost many times a JPEG's or a WebP's and whose quality moves AV1's quantizer by
    /// 0.63 a step, so that 3 of its qualities are about 2 quantizer steps.
    static func closeEnough(for format: EncoderSettings.Format) -> Int {
        format == .avif ? 3 : 2
    }
    /// A passing trial at most this far above the target (and within `closeEnough` qualities of it
    /// along the scores' slope) ends the search without the trial below it.
    static let closeScore = 1.5
    /// An image whose score through 4:2:0 chroma alone is less than this far above the target
    /// has its JPEG and AVIF trials keep chroma whole at every quality (`chromaSubsampling`
    /// `auto` only): subsampling would take most of what the target allows, and the score jumps
    /// where the encoder's default turns to 4:4:4, which no line through the trials foresees.
    static let subsampledChromaMargin = 16.0
    /// How far short of the target a trial falls before the search checks the score 4:2:0
    /// chroma leaves (`subsampledChromaMargin`): most images never need the check.
    static let shortfallBeforeChromaCheck = 3.0

    /// What a search holds beside the image: the encoder's own working memory for one trial
    /// at a time, the original's float planes at every scale (XYB and the two terms every
    /// score reads, 9 floats a pixel over a pyramid a third larger, twice with alpha), one
    /// trial's float planes (linear over its pyramid, turned into XYB in place; its blurred
    /// statistics are made a few rows at a time) and two encoded files.
    static func workingBytes(pixels: Int64, alpha: Bool, encoder: Int64) -> Int64 {
        encoder + pixels * ((alpha ? 96 : 48) + 16 + 8)
    }

    /// The file chosen and how it was found.
    struct Outcome: Sendable {
        /// The encoded file.
        let data: Data
        /// The quality it was encoded at.
        let quality: Int
        /// Its SSIMULACRA 2 score against the image before encoding.
        let score: Double
        /// Whether the score reaches the target.
        let reached: Bool
        /// How many trial encodes the search made.
        let encodes: Int
    }

    /// Searches the quality of `image` (already prepared for the saver) for `settings`'
    /// target, which must be set. Each trial first checks `watched` (the image a deadline
    /// watches, which `image` was made from): trials encode a copy in memory, which a deadline's
    /// kill does not reach, so a search past an item's time limit stops between trials.
    static func run(_ image: VipsImage, settings: EncoderSettings, stoppedWith watched: VipsImage? = nil) throws(VipsError) -> Outcome {
        guard var target = settings.qualityTarget else {
            let data = try ImageEncoder.savedBytes(image, with: settings)
            return Outcome(data: data, quality: settings.quality, score: .nan, reached: true, encodes: 1)
        }
        // Below the lowest quality a JPEG XL is made at, every quality gives that file: the
        // search would choose and report a quality that made no difference.
        if settings.format == .jxl {
            target.min = Swift.max(target.min, EncoderSettings.lowestJXLQuality)
            target.max = Swift.max(target.max, target.min)
        }
        // Every trial encodes the same pixels: computed once, not once per trial from the decode.
        let image = try image.rendered()
        let metric = try Scorer(original: image)
        var course = Course(settings: settings, target: target)
        var best: Outcome?
        // A quality known to have reached the target for this output (or a neighbouring width)
        // is usually the answer again, which the first trial and the one below it confirm.
        var quality: Int
        if let start = target.start {
            quality = Swift.max(target.min, Swift.min(target.max, start))
        } else {
            quality = try firstGuess(image, format: settings.format, target: target)
            if settings.format == .avif, settings.effort > pilotEffort {
                quality = try pilotStart(image, course: &course, metric: metric, from: quality, stoppedWith: watched)
            }
        }
        var encodes = 0
        // One trial: encoded, scored, and kept when it is the best file so far.
        func trial(at quality: Int) throws(VipsError) -> Double {
            try watched?.checkNotStopped()
            let data = try trialBytes(image, settings: course.settings, quality: quality)
            let score = try metric.score(try decodedTrial(data, format: course.settings.format))
            encodes += 1
            let reached = score >= target.ssimulacra2
            let candidate = Outcome(data: data, quality: quality, score: score, reached: reached, encodes: encodes)
            if reached {
                if best.map({ !$0.reached || quality < $0.quality }) ?? true { best = candidate }
            } else if best.map({ !$0.reached && score > $0.score }) ?? true {
                // Kept only while nothing passes: the best a target out of reach can have.
                best = candidate
            }
            return score
        }
        while encodes < maximumEncodes {
            let score = try trial(at: quality)
            guard let next = try course.next(after: score, at: quality, image: image, metric: metric) else { break }
            quality = next
        }
        // Trials that all fell short, none at `max`: its file is the one given when no quality
        // reaches the score, and it may reach it, as a tiny image's scores jump between qualities.
        if best?.reached != true, !course.bracket.trials.contains(where: { $0.quality == target.max }) {
            _ = try trial(at: target.max)
        }
        guard let best else {
            throw VipsError(operation: "ssimulacra2", message: "the quality search made no encode")
        }
        return Outcome(data: best.data, quality: best.quality, score: best.score, reached: best.reached, encodes: encodes)
    }

    /// Where a search stands: its settings (whose chroma may turn whole), the bracket of its
    /// trials, and whether the chroma check is still to be made.
    struct Course {
        var settings: EncoderSettings
        var bracket: Bracket
        /// Whether subsampling may yet be found to cost the image the target: checked once, on
        /// the first trial that falls well short while none has passed, as it costs a score.
        var chromaUnchecked: Bool

        /// The start of a search for `settings` and `target`.
        init(settings: EncoderSettings, target: QualityTarget) {
            self.settings = settings
            bracket = Bracket(target: target, format: settings.format)
            chromaUnchecked = settings.chromaSubsampling == .auto && (settings.format == .jpeg || settings.format == .avif)
        }

        /// The quality to try after a trial at `quality` scored `score`, or nil when the search
        /// is done. When chroma turns whole, the trials so far were of other encodes: the search
        /// goes on from the same quality with chroma kept whole, in a bracket of its own.
        mutating func next(after score: Double, at quality: Int, image: VipsImage, metric: Scorer) throws(VipsError) -> Int? {
            let target = bracket.target.ssimulacra2
            if chromaUnchecked, bracket.passing == nil, score < target - shortfallBeforeChromaCheck {
                chromaUnchecked = false
                if let ceiling = try subsampledChromaScore(image, metric: metric), ceiling < target + subsampledChromaMargin {
                    settings.chromaSubsampling = .subsample444
                    bracket = Bracket(target: bracket.target, format: settings.format)
                    return quality
                }
            }
            bracket.add(quality: quality, score: score)
            return bracket.next()
        }
    }

    /// What the trials so far say about where the target lies, and the quality to try next.
    ///
    /// Scores rise with quality, nearly in a line over a few steps, so the next trial goes to
    /// the lowest quality where that line reaches the target: between the highest failing and
    /// the lowest passing trial once both are known, else from the nearest trials' slope (or,
    /// with one trial, the format's typical slope). When that lands on the passing side, as
    /// meant, it usually passes by less than the line rises in `closeEnough` steps, which closes
    /// the bracket as a failing trial that far below would; otherwise the trial that far below
    /// it usually fails and closes it. A bracket twice `closeEnough` wide or less is halved,
    /// which closes it.
    struct Bracket {
        let target: QualityTarget
        /// How narrow a bracket closes the search (`QualitySearch.closeEnough(for:)`).
        let closeEnough: Int
        /// Score gained per quality step, for extrapolating from one side: the format's typical
        /// slope until two trials give the image's own.
        private(set) var slope: Double
        /// Every trial so far, quality and score.
        private(set) var trials: [(quality: Int, score: Double)] = []
        /// The highest quality that failed and its score; nil before any fails.
        private(set) var failing: (quality: Int, score: Double)?
        /// The lowest quality that passed and its score; nil before any passes.
        private(set) var passing: (quality: Int, score: Double)?

        /// A bracket with no trials yet, for `format`'s encoder.
        init(target: QualityTarget, format: EncoderSettings.Format) {
            self.target = target
            closeEnough = QualitySearch.closeEnough(for: format)
            slope = QualitySearch.typicalSlope(format)
        }

        mutating func add(quality: Int, score: Double) {
            // The slope to the nearest earlier trial is the image's own, kept within reason.
            if let nearest = trials.min(by: { abs($0.quality - quality) < abs($1.quality - quality) }), nearest.quality != quality {
                slope = Swift.min(2, Swift.max(0.1, (score - nearest.score) / Double(quality - nearest.quality)))
            }
            trials.append((quality, score))
            if score >= target.ssimulacra2 {
                if passing.map({ quality < $0.quality }) ?? true { passing = (quality, score) }
            } else if failing.map({ quality > $0.quality }) ?? true {
                failing = (quality, score)
            }
        }

        /// The quality to try next, or nil when the search is done: the bracket is closed, or
        /// the bounds are reached on the side the target lies.
        func next() -> Int? {
            let low = failing?.quality ?? target.min - 1
            let high = passing?.quality ?? target.max + 1
            if high - low <= closeEnough {
                // Nothing has passed: the highest quality allowed, which may, is tried before
                // the search gives up, as its file is the one given when none reaches the score.
                if passing == nil, let failing, failing.quality < target.max { return target.max }
                return nil
            }
            // A pass that the line puts within the bracket's width of the lowest passing
            // quality closes the bracket too: the trial below it would almost surely fail,
            // and each trial costs an encode and a score for a step or two of bytes.
            if let passing, passing.score - target.ssimulacra2 <= Swift.min(Double(closeEnough) * slope, QualitySearch.closeScore) {
                return nil
            }
            if let failing, let passing {
                if high - low <= 2 * closeEnough { return (low + high) / 2 }
                let rise = Swift.max(passing.score - failing.score, 1e-6)
                let at = Double(low) + (target.ssimulacra2 - failing.score) / rise * Double(high - low)
                return Swift.min(high - closeEnough, Swift.max(low + closeEnough, Int(at.rounded(.up))))
            }
            // One side known: along the slope to the target, moving at least a bracket's width
            // and at most 20 qualities.
            guard let known = passing ?? failing else { return nil }
            let at = Int((Double(known.quality) + (target.ssimulacra2 - known.score) / slope).rounded(.up))
            let next =
                passing != nil
                ? Swift.max(known.quality - 20, Swift.min(known.quality - closeEnough, at))
                : Swift.min(known.quality + 20, Swift.max(known.quality + closeEnough, at))
            return Swift.min(target.max, Swift.max(target.min, next))
        }
    }

    /// The AVIF effort of a pilot search (aom's fastest speed): trials at it cost a few
    /// hundredths of one at the default effort.
    static let pilotEffort = 0
    /// The most trials of a pilot search.
    static let maximumPilotEncodes = 4
    /// How many qualities below the pilot's answer an AVIF search starts: at aom's fastest
    /// speed, files score lower at a quality than at the default effort, by a few qualities'
    /// worth that varies much less from image to image than the quality a target needs does.
    static let pilotGap = 5

    /// Where an AVIF search with nothing known of the image starts: a short search at
    /// `pilotEffort` from `guess`, less `pilotGap`. A guess from the image's detail alone
    /// misses by up to 30 qualities on some images, and every trial it costs is a whole encode.
    /// The pilot's trials are the search's first for the chroma check, and what it finds holds
    /// for `course`: starting near the answer, the search's own trials may never fall short
    /// enough to make it.
    static func pilotStart(
        _ image: VipsImage, course: inout Course, metric: Scorer, from guess: Int, stoppedWith watched: VipsImage? = nil
    ) throws(VipsError) -> Int {
        let target = course.bracket.target
        var pilot = Course(settings: course.settings, target: target)
        pilot.settings.effort = pilotEffort
        var quality = guess
        for _ in 0..<maximumPilotEncodes {
            try watched?.checkNotStopped()
            let data = try trialBytes(image, settings: pilot.settings, quality: quality)
            guard
                let next = try pilot.next(
                    after: try metric.score(try decodedTrial(data, format: pilot.settings.format)), at: quality, image: image,
                    metric: metric)
            else { break }
            quality = next
        }
        course.settings.chromaSubsampling = pilot.settings.chromaSubsampling
        course.chromaUnchecked = pilot.chromaUnchecked
        let answer = pilot.bracket.passing?.quality ?? quality
        return Swift.max(target.min, Swift.min(target.max, answer - pilotGap))
    }

    /// The score gained per quality step near the scores targets ask for, roughly, by format.
    static func typicalSlope(_ format: EncoderSettings.Format) -> Double {
        switch format {
        case .avif, .heic: 0.45
        default: 0.4
        }
    }

    /// SSIMULACRA 2 against one image. The metric's weights are for five scales or six: a side
    /// under `scoredSide` leaves it four or fewer, and each later norm then takes another
    /// scale's weight (as in the reference tool), which scores an avatar or a thumbnail far
    /// below what it shows; under 8 pixels it has no score at all. So such an image and each
    /// trial are scored enlarged along each short side to `scoredSide`, as if shown enlarged:
    /// the target still chooses its quality, from the same differences. Enlarged smoothly, by
    /// just what the side lacks, so a side a pixel short is scored nearly as it is, where
    /// repeating every pixel twice made it far stricter than a side a pixel longer.
    struct Scorer {
        /// The shortest side the metric sees five scales of (113, 57, 29, 15 and 8 pixels).
        static let scoredSide = 113

        private let metric: SSIMULACRA2

        init(original: VipsImage) throws(VipsError) {
            metric = try SSIMULACRA2(original: try Self.scored(original))
        }

        /// The score of `trial`, the original's size, against it.
        func score(_ trial: VipsImage) throws(VipsError) -> Double {
            try metric.score(try Self.scored(trial))
        }

        /// The factor a side of `length` pixels is enlarged by to reach `scoredSide`: 1 for a
        /// side of that or more.
        static func enlargement(of length: Int) -> Double {
            length >= scoredSide ? 1 : Double(scoredSide) / Double(Swift.max(1, length))
        }

        /// `image` as it is scored: enlarged along each side shorter than `scoredSide` to it.
        static func scored(_ image: VipsImage) throws(VipsError) -> VipsImage {
            let factors = (enlargement(of: image.width), enlargement(of: image.height))
            guard factors != (1, 1) else { return image }
            return try image.resized(horizontalScale: factors.0, verticalScale: factors.1, kernel: .lanczos3)
        }
    }

    /// A trial's file decoded to be scored. The file is the encoder's own, not an input, so
    /// libheif's limits for hostile files (sides of at most 16,384 pixels, which AVIF outputs
    /// may pass) are lifted.
    static func decodedTrial(_ data: Data, format: EncoderSettings.Format) throws(VipsError) -> VipsImage {
        try VipsImage.open(data: data, options: format == .avif || format == .heic ? "unlimited" : "")
    }

    /// One trial's file: the settings at `quality`, with what helps each format
    /// reach a score. WebP converts to YUV with sharp (smart) subsampling, which keeps
    /// colour edges that plain 4:2:0 blurs past any quality; JPEG keeps full-resolution chroma
    /// from quality 85, where 4:2:0 costs flat colour more score than the bytes it saves.
    static func trialBytes(_ image: VipsImage, settings: EncoderSettings, quality: Int) throws(VipsError) -> Data {
        var trial = settings
        trial.quality = quality
        if trial.format == .jpeg, trial.chromaSubsampling == .auto, quality >= 85 {
            trial.chromaSubsampling = .subsample444
        }
        var suffix = trial.vipsSuffix
        if trial.format == .webp, suffix.hasSuffix("]") {
            suffix.insert(contentsOf: ",smart_subsample=true", at: suffix.index(before: suffix.endIndex))
        }
        return try ImageEncoder.savedBytes(image, with: trial, suffix: suffix)
    }

    /// The score `image` keeps through 4:2:0 chroma and little else (a JPEG at quality 100 with
    /// its chroma subsampled), or nil for an image with alpha or without colour, which is
    /// searched as it always was.
    static func subsampledChromaScore(_ image: VipsImage, metric: Scorer) throws(VipsError) -> Double? {
        guard image.bands == 3 else { return nil }
        let settings = EncoderSettings(format: .jpeg, quality: 100, strip: true, chromaSubsampling: .subsample420)
        return try metric.score(try VipsImage.open(data: try ImageEncoder.savedBytes(image, with: settings)))
    }

    /// Where the search starts: a quality typical of the format for the target, moved up for
    /// busy images and down for smooth ones, whose artifacts show less and more in the score.
    static func firstGuess(_ image: VipsImage, format: EncoderSettings.Format, target: QualityTarget) throws(VipsError) -> Int {
        // JPEG's 4:2:0 chroma costs photographs less score at the size they are published
        // than WebP's, so JPEG starts lower.
        let typical: Double =
            switch format {
            case .avif, .heic: 60
            case .jxl: 75
            case .jpeg: 72
            default: 80
            }
        let detail = try meanDetail(image)
        // Mean |Laplacian| of a small grey copy: about 2 for flat artwork, 10–20 for photographs.
        let shift = Swift.max(-8, Swift.min(8, (detail - 8) * 0.5))
        let guess = Int((typical + (target.ssimulacra2 - 75) * 1.2 + shift).rounded())
        return Swift.max(target.min, Swift.min(target.max, guess))
    }

    /// The mean absolute Laplacian of the image shrunk to at most 256 pixels wide, in grey levels.
    static func meanDetail(_ image: VipsImage) throws(VipsError) -> Double {
        var grey = try image.inEightBits()
        if grey.hasAlpha { grey = try grey.extractingBands(0, count: grey.colourBands) }
        if grey.colourBands >= 3 { grey = try grey.converted(to: .blackAndWhite) }
        if grey.width > 256 {
            let scale = 256 / Double(grey.width)
            grey = try grey.resized(horizontalScale: scale, verticalScale: scale, kernel: .linear)
        }
        let laplacian = try VipsImage.matrix([[0, -1, 0], [-1, 4, -1], [0, -1, 0]])
        let edges = try grey.applying("conv", ["mask": .image(laplacian), "precision": .string("integer")]).applying("abs")
        guard let mean = try Vips.call("avg", ["in": .image(edges)])["out"]?.number else {
            throw VipsError(operation: "avg", message: "avg gave no number")
        }
        return mean
    }
}
