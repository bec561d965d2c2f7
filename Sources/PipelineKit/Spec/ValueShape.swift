/// The shape a value in a pipeline file must have.
///
/// One set of shapes describes the whole file format: the validator checks files against it,
/// the JSON Schema generator (`pipeline schema`) prints it and `pipeline plugins` lists it, so
/// the three can never disagree.
public indirect enum ValueShape: Sendable {
    /// `true` or `false`.
    case boolean
    /// An integer within the range.
    case integer(ClosedRange<Int>)
    /// A number within the range.
    case number(ClosedRange<Double>)
    /// Any string (non-empty when `nonEmpty`).
    case string(nonEmpty: Bool)
    /// One of a fixed set of strings.
    case choice([String])
    /// A duration: a number with the unit `ms`, `s`, `m` or `h`.
    case duration
    /// A byte count: an integer, or a number with a unit such as `MB` or `GiB`.
    case byteSize
    /// A colour: `"#rgb"`, `"#rgba"`, `"#rrggbb"`, `"#rrggbbaa"` or a name (`white`, `black`, `transparent`).
    case colour
    /// An output path template with `{placeholders}`.
    case pathTemplate
    /// An object of string values under any keys (HTTP headers).
    case stringMap
    /// A list of values of one shape, at least `minCount` long.
    case array(ValueShape, minCount: Int)
    /// An object whose keys are exactly the options listed; any other key is an error.
    case object([Option])
    /// The first shape that matches.
    case anyOf([ValueShape])
    /// An object whose `key` names a variant, and whose other keys are that variant's options
    /// (the `encode` object, keyed by `format`).
    case tagged(key: String, variants: [Variant])
    /// An object with exactly one key, which names a variant, holding that variant's options
    /// (a processor step: `{"resize": {"width": 320}}`).
    case singleKey(variants: [Variant])
}

/// One named alternative of a `tagged` or `singleKey` shape: an encoder format or a processor.
public struct Variant: Sendable {
    /// The tag's value that selects the variant.
    public let name: String
    /// What the variant is, in a few words.
    public let summary: String
    /// The keys the variant accepts besides the tag.
    public let options: [Option]
    /// Whether keys beyond `options` are allowed (checked by the variant itself).
    public let acceptsOtherKeys: Bool

    /// A variant; `acceptsOtherKeys` lets a plugin read keys it did not declare.
    public init(name: String, summary: String, options: [Option], acceptsOtherKeys: Bool = false) {
        self.name = name
        self.summary = summary
        self.options = options
        self.acceptsOtherKeys = acceptsOtherKeys
    }
}
