import CVips
import Foundation

/// What libvips says about one of its operations: its arguments, their types, ranges,
/// defaults and enum values, read through GObject introspection.
///
/// This is what checks a `vips` step's arguments before any work, and what
/// `VipsImage.applying(_:_:)` checks a call against.
public struct VipsOperationInfo: Sendable {
    /// The operation's nickname, for example `flip`.
    public let name: String
    /// libvips' one-line description.
    public let summary: String
    /// Every argument, inputs and outputs, required and optional.
    public let arguments: [Argument]
    /// libvips marks it deprecated.
    public let isDeprecated: Bool
    /// A loader or saver (a class under `VipsForeign`): it reads or writes files.
    public let isForeign: Bool
    /// libvips marks it as not built for untrusted input.
    public let isUntrusted: Bool

    /// One argument of an operation.
    public struct Argument: Sendable {
        /// The name as libvips' documentation and bindings spell it, with underscores (`min_ampl`).
        public let name: String
        /// GObject's spelling of the name, with hyphens, for setting and reading the value.
        let propertyName: String
        /// libvips' one-line description of the argument.
        public let help: String
        /// The type of its value, with range, default or names where it has them.
        public let kind: Kind
        /// A call must give it (an input) or it is always set (an output).
        public let isRequired: Bool
        /// The caller gives it.
        public let isInput: Bool
        /// The operation sets it.
        public let isOutput: Bool
        /// libvips marks the argument deprecated.
        public let isDeprecated: Bool
        /// libvips' ordering of the argument among the operation's arguments.
        public let priority: Int
        let valueType: GType
    }

    /// The type of an argument's value.
    public enum Kind: Sendable, Equatable {
        /// An integer within `range`.
        case integer(range: ClosedRange<Int>, defaultValue: Int)
        /// A floating-point number within `range`.
        case number(range: ClosedRange<Double>, defaultValue: Double)
        /// A boolean.
        case boolean(defaultValue: Bool)
        /// One of `names`; `defaultValue` is one of them.
        case enumeration(names: [String], defaultValue: String?)
        /// Any set of `names`.
        case flags(names: [String])
        /// A string.
        case string
        /// An image.
        case image
        /// An array of numbers.
        case doubleArray
        /// An array of integers.
        case integerArray
        /// An array of images.
        case imageArray
        /// A stream to read from (loaders).
        case source
        /// A stream to write to (savers).
        case target
        /// An interpolator (`VipsInterpolate`), which this wrapper cannot pass.
        case interpolator
        /// A block of bytes (`VipsBlob`), such as a saved file or a profile.
        case blob
        /// A type this wrapper cannot pass.
        case other(String)

        /// A short name for listings: `integer`, `enum`, `array of numbers`, …
        public var typeName: String {
            switch self {
            case .integer: "integer"
            case .number: "number"
            case .boolean: "boolean"
            case .enumeration: "enum"
            case .flags: "flags"
            case .string: "string"
            case .image: "image"
            case .doubleArray: "array of numbers"
            case .integerArray: "array of integers"
            case .imageArray: "array of images"
            case .source: "source"
            case .target: "target"
            case .interpolator: "interpolator"
            case .blob: "blob"
            case .other(let name): name
            }
        }
    }

    /// The operation registered as `name`, or nil when libvips has none (or only an abstract class).
    public static func named(_ name: String) -> VipsOperationInfo? {
        guard (try? Vips.start()) != nil else { return nil }
        if let known = described.withLock({ $0[name] }) { return known }
        let type = pl_operation_type(name)
        guard type != 0 else { return nil }
        let info = VipsOperationInfo(name: name, type: type)
        described.withLock { $0[name] = info }
        return info
    }

    /// Operations already described: a class's arguments never change, and steps call the same
    /// few operations on every image, so introspection runs once per operation, not per call.
    private static let described = Locked<[String: VipsOperationInfo]>([:])

    /// The nicknames of every operation libvips has, sorted.
    public static var allNames: [String] {
        guard (try? Vips.start()) != nil, let array = pl_operation_nicknames() else { return [] }
        defer { pl_nicknames_free(array) }
        let names = (0..<pl_nickname_count(array)).compactMap { pl_nickname_at(array, $0).map { String(cString: $0) } }
        return Array(Set(names)).sorted()
    }

    /// The inputs a caller may set, required ones first, then by libvips' priority.
    public var inputs: [Argument] {
        arguments.filter { $0.isInput && !$0.isOutput }.sorted {
            ($0.isRequired ? 0 : 1, $0.priority) < ($1.isRequired ? 0 : 1, $1.priority)
        }
    }

    /// The outputs the operation produces.
    public var outputs: [Argument] {
        arguments.filter(\.isOutput)
    }

    /// The argument named `name` (`min_ampl` or `min-ampl`).
    public func argument(named name: String) -> Argument? {
        let spelling = name.replacingOccurrences(of: "-", with: "_")
        return arguments.first { $0.name == spelling }
    }

    private init(name: String, type: GType) {
        self.name = name
        summary = pl_operation_description(type).map { String(cString: $0) } ?? ""
        let flags = pl_operation_flags(type)
        isDeprecated = flags & Int32(VIPS_OPERATION_DEPRECATED.rawValue) != 0
        isUntrusted = flags & Int32(VIPS_OPERATION_UNTRUSTED.rawValue) != 0
        isForeign = pl_operation_is_foreign(type) != 0
        guard let array = pl_operation_arguments(type) else {
            arguments = []
            return
        }
        defer { pl_arguments_free(array) }
        arguments = (0..<pl_argument_count(array)).compactMap { index in
            guard let raw = pl_argument_at(array, index)?.pointee, let name = raw.name else { return nil }
            let flags = UInt32(bitPattern: raw.flags)
            let propertyName = String(cString: name)
            return Argument(
                name: propertyName.replacingOccurrences(of: "-", with: "_"),
                propertyName: propertyName,
                help: raw.blurb.map { String(cString: $0) } ?? "",
                kind: Self.kind(of: raw),
                // A deprecated argument may still be flagged required (shrinkh's old "xshrink",
                // an alias of "hshrink"): nobody has to give it.
                isRequired: flags & VIPS_ARGUMENT_REQUIRED.rawValue != 0 && flags & VIPS_ARGUMENT_DEPRECATED.rawValue == 0,
                isInput: flags & VIPS_ARGUMENT_INPUT.rawValue != 0,
                isOutput: flags & VIPS_ARGUMENT_OUTPUT.rawValue != 0,
                isDeprecated: flags & VIPS_ARGUMENT_DEPRECATED.rawValue != 0,
                priority: Int(raw.priority),
                valueType: raw.value_type
            )
        }
    }

    private static func kind(of raw: PLArgument) -> Kind {
        switch raw.kind {
        case PL_KIND_INT:
            // Clamp to Int's range: some guint64 arguments reach past it.
            let low = Int(max(raw.minimum, -9.0e18)), high = Int(min(raw.maximum, 9.0e18))
            return .integer(range: low...max(low, high), defaultValue: Int(max(min(raw.default_value, 9.0e18), -9.0e18)))
        case PL_KIND_DOUBLE:
            return .number(range: raw.minimum...max(raw.minimum, raw.maximum), defaultValue: raw.default_value)
        case PL_KIND_BOOL:
            return .boolean(defaultValue: raw.default_value != 0)
        case PL_KIND_ENUM:
            let members = enumMembers(raw.value_type)
            return .enumeration(names: members.map(\.name), defaultValue: members.first { Double($0.value) == raw.default_value }?.name)
        case PL_KIND_FLAGS:
            return .flags(names: enumMembers(raw.value_type).map(\.name))
        case PL_KIND_STRING: return .string
        case PL_KIND_IMAGE: return .image
        case PL_KIND_ARRAY_DOUBLE: return .doubleArray
        case PL_KIND_ARRAY_INT: return .integerArray
        case PL_KIND_ARRAY_IMAGE: return .imageArray
        case PL_KIND_SOURCE: return .source
        case PL_KIND_TARGET: return .target
        case PL_KIND_INTERPOLATE: return .interpolator
        case PL_KIND_BLOB: return .blob
        default: return .other(g_type_name(raw.value_type).map { String(cString: $0) } ?? "unknown")
        }
    }

    /// The members of an enum or flags type, in declaration order, without libvips' `last` sentinel.
    static func enumMembers(_ type: GType) -> [(name: String, value: Int32)] {
        var members: [(name: String, value: Int32)] = []
        var index: Int32 = 0
        var value: Int32 = 0
        while let nick = pl_enum_member(type, index, &value) {
            let name = String(cString: nick)
            if name != "last" { members.append((name, value)) }
            index += 1
        }
        return members
    }
}
