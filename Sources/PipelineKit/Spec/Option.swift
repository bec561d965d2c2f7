/// One key of an object in a pipeline file: its name, shape, default and help text.
public struct Option: Sendable {
    /// The key as the file writes it.
    public let name: String
    /// The values the key accepts.
    public let shape: ValueShape
    /// Whether the file must give the key.
    public let isRequired: Bool
    /// The value used when the key is absent; shown in the schema and in `pipeline plugins`.
    public let defaultValue: JSONNode?
    /// How the default is worked out where it depends on the machine (the cores a process may
    /// use): the generated reference shows this rule instead of this machine's `defaultValue`.
    public let defaultRule: String?
    /// What the key does, for the schema, the reference docs and `pipeline plugins`.
    public let help: String
    /// Why a value of another JSON type is wrong here, when the expected type alone does not
    /// say it (a quality target given to a format whose quality is fixed); added to the message.
    public let mismatchReason: String?
    /// A value the reference docs show for the key, as JSON text, where one made from its shape
    /// or its help's `for example "…"` would not be valid (a file that must exist, hex digits).
    public let example: String?

    /// An option of any shape; `defaultRule` explains a default that depends on the machine.
    public init(
        _ name: String, _ shape: ValueShape, required: Bool = false, default defaultValue: JSONNode? = nil,
        defaultRule: String? = nil, help: String, mismatchReason: String? = nil, example: String? = nil
    ) {
        self.name = name
        self.shape = shape
        self.isRequired = required
        self.defaultValue = defaultValue
        self.defaultRule = defaultRule
        self.help = help
        self.mismatchReason = mismatchReason
        self.example = example
    }

    /// An integer option within `range`.
    public static func integer(_ name: String, in range: ClosedRange<Int>, required: Bool = false, default value: Int? = nil, help: String)
        -> Option
    {
        Option(name, .integer(range), required: required, default: value.map { JSONNode(plain: $0) }, help: help)
    }

    /// A number option within `range`.
    public static func number(
        _ name: String, in range: ClosedRange<Double>, required: Bool = false, default value: Double? = nil, help: String
    ) -> Option {
        Option(name, .number(range), required: required, default: value.map { JSONNode(plain: $0) }, help: help)
    }

    /// A boolean option.
    public static func boolean(_ name: String, default value: Bool, help: String) -> Option {
        Option(name, .boolean, default: JSONNode(plain: value), help: help)
    }

    /// An option taking one of `values`.
    public static func choice(_ name: String, _ values: [String], required: Bool = false, default value: String? = nil, help: String)
        -> Option
    {
        Option(name, .choice(values), required: required, default: value.map { JSONNode(plain: $0) }, help: help)
    }

    /// A choice among the raw values of a string enumeration.
    public static func choice<Choice: CaseIterable & RawRepresentable<String>>(
        _ name: String, _ type: Choice.Type, required: Bool = false, default value: Choice? = nil, help: String
    ) -> Option {
        choice(name, Choice.allCases.map(\.rawValue), required: required, default: value?.rawValue, help: help)
    }

    /// A colour option (`#rrggbb`, a name, or an array of components).
    public static func colour(_ name: String, default value: String? = nil, help: String) -> Option {
        Option(name, .colour, default: value.map { JSONNode(plain: $0) }, help: help)
    }
}

extension Option {
    /// The key a British spelling (`colour`, `backgroundColour`) stands for: the same with
    /// `color`, as CSS and the steps spell it, when `known` has it and `beside` (the object's
    /// other keys) does not; nil otherwise, and for any other key.
    static func cssSpelling(of key: String, among known: [String], beside: [String]) -> String? {
        guard key.contains("olour") else { return nil }
        let spelling = key.replacingOccurrences(of: "colour", with: "color").replacingOccurrences(of: "Colour", with: "Color")
        guard !known.contains(key), known.contains(spelling), !beside.contains(spelling) else { return nil }
        return spelling
    }
}
