/// A quality found per image instead of fixed: the lowest whose SSIMULACRA 2 score against the
/// image as it stood before encoding reaches `ssimulacra2`, searched between `min` and `max`.
///
/// Written as `"quality": {"ssimulacra2": 75, "min": 40, "max": 95}` in an `encode` object (or
/// a `formats` entry) of the lossy formats that have a quality: jpeg, webp, avif, jxl and heic.
public struct QualityTarget: Sendable, Hashable {
    /// The score each file must reach, 30–100 (70 is high quality, 90 visually lossless).
    public var ssimulacra2: Double
    /// The lowest quality the search may choose.
    public var min: Int
    /// The highest quality the search may choose; the file it gives when no quality reaches
    /// the score.
    public var max: Int
    /// Where this file's search starts, when something better than a guess from the image is
    /// known: the quality the journal remembers for the output, or the one a neighbouring width
    /// chose in this run. Not part of the target (`identity`), only of one search.
    var start: Int? = nil

    /// The formats whose `quality` may be a target.
    public static let formats: Set<EncoderSettings.Format> = [.jpeg, .webp, .avif, .jxl, .heic]
    /// Those formats by name, for a message that lists them: `avif, heic, jpeg, jxl, webp`.
    public static var formatList: String { formats.map(\.rawValue).sorted().joined(separator: ", ") }

    /// What the failure of an animation kept whole with a target advises: the pipeline file's
    /// ways out, which `convert` says by its flag.
    package static let animationAdvice =
        "give the output a quality instead of a target, or make it from the first frame with \"decompress\": {\"animation\": \"first\"}"

    /// The scores a target may ask for: below 30 the reference calls the result low quality,
    /// which no one searches for.
    static let scoreRange: ClosedRange<Double> = 30...100

    /// A target of `ssimulacra2`, searched between qualities `min` and `max`.
    public init(ssimulacra2: Double, min: Int = 1, max: Int = 100) {
        self.ssimulacra2 = ssimulacra2
        self.min = min
        self.max = max
    }

    /// The `quality` option of `format`: a fixed number, or for the formats above, a target. A
    /// target given to another format is refused with the formats that take one.
    static func option(for format: EncoderSettings.Format, help: String = "quality, 1–100") -> Option {
        let fixed = ValueShape.integer(1...100)
        guard formats.contains(format) else {
            return Option(
                "quality", fixed, default: JSONNode(plain: EncoderSettings.defaultQuality(format)), help: help,
                mismatchReason: "\(format.rawValue)'s quality is a fixed number; a target score is for \(formatList)")
        }
        let target = ValueShape.object([
            .number(
                "ssimulacra2", in: scoreRange, required: true,
                help: "the SSIMULACRA 2 score every file must reach, 30–100 (70 high quality, 90 visually lossless)"),
            .integer("min", in: 1...100, default: 1, help: "the lowest quality the search may choose"),
            .integer(
                "max", in: 1...100, default: 100,
                help: "the highest quality the search may choose (the file given, with a warning, when none reaches the score)"),
        ])
        return Option(
            "quality", .anyOf([fixed, target]), default: JSONNode(plain: EncoderSettings.defaultQuality(format)),
            help: help + ", or a target object: `ssimulacra2` (the score to reach, 30–100), `min` and `max` (the qualities "
                + "searched, 1–100): per image, the lowest quality whose SSIMULACRA 2 score reaches it (at most 6 trial encodes)")
    }

    /// The fixed quality `options` give, or nil when they give none or a target.
    static func fixedQuality(_ options: ProcessorOptions) throws(OptionError) -> Int? {
        guard let node = options.value("quality"), case .number = node.value else { return nil }
        return try options.int("quality")
    }

    /// The target `options` give as `quality`, or nil when the quality is fixed; a target's
    /// bounds out of order, or a target for a lossless encode, is an error naming the key.
    static func read(_ options: ProcessorOptions, format: EncoderSettings.Format) throws(OptionError) -> QualityTarget? {
        guard let node = options.value("quality"), case .object = node.value else { return nil }
        guard formats.contains(format) else {
            throw OptionError(option: "quality", "\(format.rawValue) takes a fixed quality, not a target")
        }
        guard case .number(let score, _)? = node["ssimulacra2"]?.value else {
            throw OptionError(option: "quality.ssimulacra2", "a quality target needs ssimulacra2, the score to reach")
        }
        guard scoreRange.contains(score) else {
            throw OptionError(option: "quality.ssimulacra2", "\(node["ssimulacra2"]?.jsonText ?? "") is not from 30 to 100")
        }
        func bound(_ key: String, _ fallback: Int) throws(OptionError) -> Int {
            guard let value = node[key] else { return fallback }
            guard case .number(let number, true) = value.value, let integer = Int(exactly: number), (1...100).contains(integer) else {
                throw OptionError(option: "quality.\(key)", "\(value.jsonText) is not an integer from 1 to 100")
            }
            return integer
        }
        let target = QualityTarget(ssimulacra2: score, min: try bound("min", 1), max: try bound("max", 100))
        guard target.min <= target.max else {
            throw OptionError(option: "quality.min", "min \(target.min) is above max \(target.max)")
        }
        if options.has("lossless"), (try? options.bool("lossless")) == true {
            // Lossless WebP takes a fixed quality as its effort; the others take none beside lossless.
            let remedy = format == .webp ? "drop lossless or give a fixed quality" : "drop lossless or the quality"
            throw OptionError(option: "quality", "a lossless encode has no quality to search: \(remedy)")
        }
        return target
    }

    /// How the target reads in the journal's record and in `explain`'s plan.
    var identity: String {
        "searches quality for SSIMULACRA2 \(ssimulacra2.formatted(places: 2)) within \(min)-\(max)"
    }
}

extension Double {
    /// The number with at most `places` decimals and no trailing zeros: `75`, `72.5`.
    /// `self` and `other` written with the fewest places, from `places`, that tell them apart:
    /// a score of 96.96 and a target of 96.97 are not both "97".
    func formatted(places: Int, apartFrom other: Double) -> (String, String) {
        var places = places
        while places < 6, formatted(places: places) == other.formatted(places: places) { places += 1 }
        return (formatted(places: places), other.formatted(places: places))
    }

    func formatted(places: Int) -> String {
        var text = String(format: "%.\(places)f", self)
        while text.contains("."), text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

/// What a quality search chose for one file.
public struct SearchedQuality: Sendable, Hashable {
    /// The quality the file was encoded at.
    public let quality: Int
    /// The file's SSIMULACRA 2 score against the image before encoding.
    public let score: Double
    /// The score the target asked for.
    public let target: Double

    /// The search's choice: the `quality` it encoded at, the `score` reached and the `target` asked for.
    public init(quality: Int, score: Double, target: Double) {
        self.quality = quality
        self.score = score
        self.target = target
    }

    /// Whether the file reaches the target.
    public var reached: Bool { score >= target }
}
