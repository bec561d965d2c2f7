/// One key of an object in a pipeline file: its name, shape, default and help text.
public struct Option: Sendable {
    public let name: String
    public let shape: ValueShape
    public let isRequired: Bool
    /// The value used when the key is absent; shown in the schema and in `pipeline plugins`.
    public let defaultValue: JSONNode?
    /// How the default is worked out where it depends on the machine (the cores a process may
    /// use): the generated reference shows this rule instead of this machine's `defaultValue`.
    public let defaultRule: String?
    public let help: String

    public init(_ name: String, _ shape: ValueShape, required: Bool = false, default defaultValue: JSONNode? = nil,
                defaultRule: String? = nil, help: String) {
        self.name = name
        self.shape = shape
        self.isRequired = required
        self.defaultValue = defaultValue
        self.defaultRule = defaultRule
        self.help = help
    }

    public static func integer(_ name: String, in range: ClosedRange<Int>, required: Bool = false, default value: Int? = nil, help: String) -> Option {
        Option(name, .integer(range), required: required, default: value.map { JSONNode(plain: $0) }, help: help)
    }

    public static func number(_ name: String, in range: ClosedRange<Double>, required: Bool = false, default value: Double? = nil, help: String) -> Option {
        Option(name, .number(range), required: required, default: value.map { JSONNode(plain: $0) }, help: help)
    }

    public static func boolean(_ name: String, default value: Bool, help: String) -> Option {
        Option(name, .boolean, default: JSONNode(plain: value), help: help)
    }

    public static func choice(_ name: String, _ values: [String], required: Bool = false, default value: String? = nil, help: String) -> Option {
        Option(name, .choice(values), required: required, default: value.map { JSONNode(plain: $0) }, help: help)
    }

    /// A choice among the raw values of a string enumeration.
    public static func choice<Choice: CaseIterable & RawRepresentable<String>>(
        _ name: String, _ type: Choice.Type, default value: Choice? = nil, help: String
    ) -> Option {
        choice(name, Choice.allCases.map(\.rawValue), default: value?.rawValue, help: help)
    }

    public static func colour(_ name: String, default value: String? = nil, help: String) -> Option {
        Option(name, .colour, default: value.map { JSONNode(plain: $0) }, help: help)
    }
}
