public import PipelineKit
public import Vips

/// The `vips` step: any one-image libvips operation, by name, with its other arguments as JSON.
///
/// ```json
/// {"vips": {"operation": "gamma", "exponent": 1.8}}
/// ```
///
/// The operation and every argument are checked when the pipeline file is loaded, against
/// libvips' own introspection (names with suggestions, types, enum values, ranges, required
/// arguments), so a mistake exits 2 before any work. Refused, because they read or write files
/// or memory the file should not reach: loaders and savers (anything under `VipsForeign`),
/// deprecated operations, and operations with a string, source, target, blob or image-array
/// argument (this keeps out `system`, profile and font file names, and every file read or write).
public struct VipsStep: ImageProcessing {
    /// The step's key in a pipeline file.
    public static let name = "vips"
    /// One line for `pipeline plugins` and the JSON Schema.
    public static let summary =
        "Runs any libvips operation that takes one image and gives one image; its other arguments are the step's keys."
    /// True: any argument of the named libvips operation is an option, checked by `init(options:)`.
    public static let acceptsUndeclaredOptions = true

    /// The options the step accepts, with their defaults, ranges and help.
    public static let options: [Option] = [
        Option(
            "operation", .string(nonEmpty: true), required: true,
            help: "The libvips operation's name, for example \"gamma\" or \"sharpen\" (`pipeline plugins --vips` lists them).")
    ]

    /// The operation's nickname.
    public let operation: String
    /// The arguments besides the input image, checked against the operation.
    public let arguments: [String: VipsValue]
    /// The arguments as the file gave them, for the identifier.
    private let argumentText: String

    /// The step as a pipeline file configures it, from its checked options.
    public init(options: ProcessorOptions) throws(OptionError) {
        try self.init(operation: options.string("operation"), jsonArguments: options.undeclared)
    }

    /// A step for use from Swift, with arguments as JSON values (`JSONNode(plain: 1.5)`); checks
    /// what the file's validator would.
    public init(operation: String, jsonArguments: [String: JSONNode]) throws(OptionError) {
        let info = try Self.permittedOperation(operation)
        let input = info.inputs.filter { $0.isRequired && $0.kind == .image }
        var arguments: [String: VipsValue] = [:]
        let settable = info.inputs.filter { !$0.isDeprecated && $0.kind != .image }
        for key in jsonArguments.keys.sorted() {
            guard let value = jsonArguments[key] else { continue }
            guard let argument = info.argument(named: key), argument.isInput, !argument.isOutput else {
                let names = settable.map(\.name)
                let hint = NearestName.suggestion(for: key, among: names).map { "; did you mean \"\($0)\"?" } ?? ""
                let known =
                    names.isEmpty
                    ? "it takes no arguments besides its image" : "its arguments are " + names.map { "\"\($0)\"" }.joined(separator: ", ")
                throw OptionError(option: key, "\(operation) has no argument \(key.quotedValue)\(hint) (\(known))")
            }
            if input.contains(where: { $0.name == argument.name }) || argument.kind == .image {
                throw OptionError(option: key, "is an image argument: the step's image is the input, and no other image can be given")
            }
            arguments[argument.name] = try Self.value(value, for: argument, key: key)
        }
        for argument in settable where argument.isRequired && arguments[argument.name] == nil {
            throw OptionError(option: nil, "\(operation) needs the argument \"\(argument.name)\" (\(Self.describe(argument)))")
        }
        self.operation = operation
        self.arguments = arguments
        argumentText = jsonArguments.keys.sorted().compactMap { key in jsonArguments[key].map { "\(key):\($0.jsonText)" } }.joined(
            separator: ",")
    }

    /// The step and its settings, for logs, caches and coalescing.
    public var identifier: String {
        argumentText.isEmpty ? "vips(operation:\(operation))" : "vips(operation:\(operation),\(argumentText))"
    }

    /// libvips cannot say what size an operation will make before it runs, so the planner
    /// takes the size as unchanged (and decodes at full size when this is the first step).
    public func outputSize(for size: ImageSize) -> ImageSize { size }

    /// The image the operation makes from one of `size`, which it holds whole, for admission by
    /// memory: an enlargement (a `zoom`, an `embed`) counts at its size. Learned by building the
    /// operation, without running it, on a blank image of that size (`VipsImage.header(of:…)`);
    /// `size` when it cannot be built so (an operation that reads pixels as it is built).
    public func workingSize(for size: ImageSize) -> ImageSize {
        let made = LibvipsErrorBuffer.sharing {
            VipsImage.header(of: operation, arguments, appliedToBlank: size.width, height: size.height, bands: 3)
        }
        return made?.size ?? size
    }

    /// Applies the step to `image`; a thrown error fails this item only.
    public func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let result = try image.applying(operation, arguments)
        // The header is known before any pixel is computed: refuse an image too large to make.
        if result.size.pixelCount > context.maxPixels {
            throw OperationTooLarge(operation: operation, size: result.size, maxPixels: context.maxPixels)
        }
        return result
    }

    /// The operation's description, or the reason it cannot be a step.
    public static func permittedOperation(_ name: String) throws(OptionError) -> VipsOperationInfo {
        guard let info = VipsOperationInfo.named(name) else {
            let hint = NearestName.suggestion(for: name, among: VipsOperationInfo.allNames).map { "; did you mean \"\($0)\"?" } ?? ""
            throw OptionError(
                option: "operation", "libvips has no operation \(name.quotedValue)\(hint) (`pipeline plugins --vips` lists them)")
        }
        if let reason = refusal(of: info) { throw OptionError(option: "operation", "\(name.quotedValue) cannot be a step: \(reason)") }
        return info
    }

    /// Why an operation cannot be a `vips` step, or nil when it can.
    public static func refusal(of info: VipsOperationInfo) -> String? {
        if info.isDeprecated { return "libvips marks it deprecated" }
        if info.isForeign { return "it is a loader or saver, which reads or writes files" }
        if info.isUntrusted { return "libvips marks it unsafe for untrusted input" }
        let unsafe: [VipsOperationInfo.Kind] = [.string, .source, .target, .blob, .imageArray]
        if let argument = info.arguments.first(where: { ($0.isInput || $0.isOutput) && unsafe.contains($0.kind) && !$0.isDeprecated }) {
            return "its argument \"\(argument.name)\" is a \(argument.kind.typeName), which could name or carry files"
        }
        let inputs = info.inputs.filter { $0.isRequired && $0.kind == .image }
        let outputs = info.outputs.filter { $0.isRequired && $0.kind == .image }
        guard inputs.count == 1, outputs.count == 1 else {
            return
                "it takes \(inputs.count) required input image\(inputs.count == 1 ? "" : "s") and gives \(outputs.count) output image\(outputs.count == 1 ? "" : "s"); a step takes one and gives one"
        }
        return nil
    }

    /// Every operation that can be a step, with its description.
    public static var permittedOperations: [VipsOperationInfo] {
        VipsOperationInfo.allNames.compactMap(VipsOperationInfo.named).filter { refusal(of: $0) == nil }
    }

    /// The argument's type, range and default, for messages and listings.
    public static func describe(_ argument: VipsOperationInfo.Argument) -> String {
        switch argument.kind {
        case .integer(let range, let fallback):
            "integer \(Self.bound(Double(range.lowerBound)))–\(Self.bound(Double(range.upperBound)))"
                + (argument.isRequired ? "" : ", default \(fallback)")
        case .number(let range, let fallback):
            "number \(Self.bound(range.lowerBound))–\(Self.bound(range.upperBound))"
                + (argument.isRequired ? "" : ", default \(Self.bound(fallback))")
        case .boolean(let fallback):
            "boolean" + (argument.isRequired ? "" : ", default \(fallback)")
        case .enumeration(let names, let fallback):
            names.joined(separator: "|") + (argument.isRequired ? "" : fallback.map { ", default \"\($0)\"" } ?? "")
        case .flags(let names):
            "any of " + names.joined(separator: "|")
        case .doubleArray:
            "number or array of numbers"
        case .integerArray:
            "array of integers"
        default:
            argument.kind.typeName
        }
    }

    private static func bound(_ value: Double) -> String {
        if abs(value) >= 1e15 { return value < 0 ? "-∞" : "∞" }
        return value.rounded() == value ? String(Int(value)) : String(value)
    }

    private static func value(_ json: JSONNode, for argument: VipsOperationInfo.Argument, key: String) throws(OptionError) -> VipsValue {
        func expected() -> OptionError {
            OptionError(option: key, "expected \(describe(argument)), found \(json.jsonText)")
        }
        func numbers(_ items: [JSONNode]) -> [Double]? {
            let values = items.compactMap { if case .number(let number, _) = $0.value { number } else { nil } }
            return values.count == items.count && !values.isEmpty ? values : nil
        }
        switch (argument.kind, json.value) {
        case (.integer(let range, _), .number(let number, _)):
            guard let integer = Int(exactly: number), range.contains(integer) else { throw expected() }
            return .integer(integer)
        case (.number(let range, _), .number(let number, _)):
            guard range.contains(number) else { throw expected() }
            return .number(number)
        case (.boolean, .bool(let flag)):
            return .boolean(flag)
        case (.enumeration(let names, _), .string(let nick)):
            guard names.contains(nick) else {
                let hint = NearestName.suggestion(for: nick, among: names).map { "; did you mean \"\($0)\"?" } ?? ""
                throw OptionError(option: key, "unknown value \(nick.quotedValue)\(hint): expected one of \(names.joined(separator: ", "))")
            }
            return .string(nick)
        case (.flags(let names), .string(let nick)):
            guard names.contains(nick) else { throw expected() }
            return .names([nick])
        case (.flags(let names), .array(let items)):
            let nicks = items.compactMap { if case .string(let nick) = $0.value { nick } else { nil } }
            guard nicks.count == items.count, nicks.allSatisfy(names.contains) else { throw expected() }
            return .names(nicks)
        case (.doubleArray, .number(let number, _)):
            return .numbers([number])
        case (.doubleArray, .array(let items)):
            guard let values = numbers(items) else { throw expected() }
            return .numbers(values)
        case (.integerArray, .array(let items)):
            guard let values = numbers(items), values.allSatisfy({ Int(exactly: $0) != nil }) else { throw expected() }
            return .integers(values.compactMap { Int(exactly: $0) })
        default:
            throw expected()
        }
    }
}

extension VipsStep {
    /// The operation would make an image with more pixels than `decompress.maxPixels`; the item fails.
    public struct OperationTooLarge: Error, Sendable, CustomStringConvertible {
        /// The libvips operation, by its nickname.
        public let operation: String
        /// The size of the image it would have made.
        public let size: ImageSize
        /// The run's `decompress.maxPixels`.
        public let maxPixels: Int

        /// The message the item fails with, naming the operation, the size and the limit.
        public var description: String {
            "\(operation) would make a \(size) image, more than the \(maxPixels) pixels decompress.maxPixels allows"
        }
    }
}
