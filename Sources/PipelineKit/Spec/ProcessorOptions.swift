public import Foundation

/// The options of one processor step, already checked against the processor's `options`.
///
/// Getters apply the option's default when the key is absent. Because the values were
/// validated, a getter fails only when a required option is missing, or a plugin asks for an
/// option it did not declare or reads one as another type than it declares (each reported as
/// `OptionError`, never a crash).
public struct ProcessorOptions: Sendable {
    private let values: [String: JSONNode]
    private let definitions: [String: Option]
    /// The folder relative paths in options resolve against: the pipeline file's folder.
    public let baseDirectory: URL
    /// The face detector this build has (`ProcessorRegistry.faceFinder`), for a step that
    /// crops to faces; nil when the build has none.
    public let faceFinder: (any FaceFinding)?

    /// Options `values` as the file gives them, read through `definitions`; relative paths
    /// resolve against `baseDirectory`; `faceFinder` is the build's face detector, if any.
    public init(
        values: [String: JSONNode], definitions: [Option],
        baseDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        faceFinder: (any FaceFinding)? = nil
    ) {
        self.faceFinder = faceFinder
        // A key spelt `colour` where `color` is declared is that option (the validator notes it).
        let known = definitions.map(\.name)
        let keys = Array(values.keys)
        self.values = Dictionary(
            values.map { (Option.cssSpelling(of: $0.key, among: known, beside: keys) ?? $0.key, $0.value) },
            uniquingKeysWith: { first, _ in first })
        self.definitions = Dictionary(definitions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.baseDirectory = baseDirectory
    }

    /// The keys the file set that the processor does not declare, in no particular order: only
    /// a processor with `acceptsUndeclaredOptions` gets any.
    public var undeclared: [String: JSONNode] {
        values.filter { definitions[$0.key] == nil }
    }

    /// Whether the file set `name` itself (defaults do not count).
    public func has(_ name: String) -> Bool { values[name] != nil }

    /// The value the file set for `name` as written, for options of more than one shape; nil when absent.
    public func value(_ name: String) -> JSONNode? { values[name] }

    /// An integer option, or its default.
    public func int(_ name: String) throws(OptionError) -> Int {
        guard let value = try optionalInt(name) else { throw missing(name) }
        return value
    }

    /// An integer option, its default, or nil when neither is there.
    public func optionalInt(_ name: String) throws(OptionError) -> Int? {
        guard let node = try node(name) else { return nil }
        guard case .number(let number, true) = node.value else { throw mistyped(name, "an integer", node) }
        // A number is held as a Double: one at either end of Int's range (a range up to
        // `Int.max`) is that end, not past it.
        return Int(exactly: number) ?? (number > 0 ? Int.max : Int.min)
    }

    /// A number option, or its default.
    public func double(_ name: String) throws(OptionError) -> Double {
        guard let value = try optionalDouble(name) else { throw missing(name) }
        return value
    }

    /// A number option, its default, or nil when neither is there.
    public func optionalDouble(_ name: String) throws(OptionError) -> Double? {
        guard let node = try node(name) else { return nil }
        guard case .number(let number, _) = node.value else { throw mistyped(name, "a number", node) }
        return number
    }

    /// A boolean option, or its default.
    public func bool(_ name: String) throws(OptionError) -> Bool {
        guard let node = try node(name) else { throw missing(name) }
        guard case .bool(let value) = node.value else { throw mistyped(name, "a boolean", node) }
        return value
    }

    /// A string option, or its default.
    public func string(_ name: String) throws(OptionError) -> String {
        guard let value = try optionalString(name) else { throw missing(name) }
        return value
    }

    /// A string option, its default, or nil when neither is there.
    public func optionalString(_ name: String) throws(OptionError) -> String? {
        guard let node = try node(name) else { return nil }
        guard case .string(let value) = node.value else { throw mistyped(name, "a string", node) }
        return value
    }

    /// A choice option as its enumeration case.
    public func choice<Choice: RawRepresentable<String>>(_ name: String, as type: Choice.Type) throws(OptionError) -> Choice {
        guard let value = try optionalChoice(name, as: type) else { throw missing(name) }
        return value
    }

    /// A choice option as its enumeration case, or nil when absent and without a default.
    public func optionalChoice<Choice: RawRepresentable<String>>(_ name: String, as type: Choice.Type) throws(OptionError) -> Choice? {
        guard let raw = try optionalString(name) else { return nil }
        guard let value = Choice(rawValue: raw) else { throw OptionError(option: name, "unknown value \(raw.quotedValue)") }
        return value
    }

    /// A duration option (a number with `ms`, `s`, `m` or `h`, or a number of seconds) in seconds.
    public func seconds(_ name: String) throws(OptionError) -> Double {
        guard let node = try node(name) else { throw missing(name) }
        guard let seconds = Units.seconds(in: node) else { throw OptionError(option: name, "\(node.jsonText) is not a duration") }
        return seconds
    }

    /// A byte-size option (a number with a unit such as `MB`, or a number of bytes) in bytes.
    public func bytes(_ name: String) throws(OptionError) -> Int64 {
        guard let node = try node(name) else { throw missing(name) }
        switch node.value {
        case .number(let number, _):
            if let bytes = Int64(exactly: number) { return bytes }
        case .string(let text):
            if let bytes = Units.bytes(in: text) { return bytes }
        default:
            break
        }
        throw OptionError(option: name, "\(node.jsonText) is not a byte size")
    }

    /// A colour option as RGBA components 0–255.
    public func colour(_ name: String) throws(OptionError) -> [Double] {
        guard let value = try optionalColour(name) else { throw missing(name) }
        return value
    }

    /// A colour option as RGBA components 0–255, or nil when absent and without a default.
    public func optionalColour(_ name: String) throws(OptionError) -> [Double]? {
        guard let node = try node(name) else { return nil }
        guard let colour = Units.colour(in: node) else { throw OptionError(option: name, "\(node.jsonText) is not a colour") }
        return colour
    }

    private func node(_ name: String) throws(OptionError) -> JSONNode? {
        guard let definition = definitions[name] else {
            throw OptionError(option: name, "the processor reads an option it does not declare")
        }
        return values[name] ?? definition.defaultValue
    }

    private func missing(_ name: String) -> OptionError {
        OptionError(option: name, "is required")
    }

    /// A value the declaration let through, read as another type: the processor's mistake.
    private func mistyped(_ name: String, _ expected: String, _ node: JSONNode) -> OptionError {
        OptionError(
            option: name,
            "the processor reads it as \(expected), but declares a shape that lets \(node.jsonText) through: read it as it is declared")
    }
}
