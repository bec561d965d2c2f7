import CVips

/// A value passed to or read from a libvips operation by `Vips.call(_:_:)`.
public enum VipsValue: Sendable {
    /// An integer argument, or an enum by its value.
    case integer(Int)
    /// A floating-point argument.
    case number(Double)
    /// A boolean argument.
    case boolean(Bool)
    /// An enum member by its nick (`"horizontal"`), or a string argument.
    case string(String)
    /// A set of flags by their nicks.
    case names([String])
    /// An array of numbers (`VipsArrayDouble`).
    case numbers([Double])
    /// An array of integers (`VipsArrayInt`).
    case integers([Int])
    /// An image argument or result.
    case image(VipsImage)
    /// An array of images (`VipsArrayImage`).
    case images([VipsImage])

    /// The value as a number, when it is one.
    public var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// The value as an image, when it is one.
    public var image: VipsImage? {
        if case .image(let image) = self { image } else { nil }
    }
}

extension Vips {
    /// Runs the libvips operation `name` with `arguments` by name, and returns its outputs by
    /// name (images, numbers, booleans and arrays of numbers).
    ///
    /// Every argument is checked against libvips' introspection first: unknown names, outputs
    /// given as inputs, wrong types, values out of range, unknown enum nicks and missing required
    /// inputs are errors that name the argument, and nothing runs.
    public static func call(_ name: String, _ arguments: [String: VipsValue]) throws(VipsError) -> [String: VipsValue] {
        try BuiltOperation(name, arguments).outputs
    }

    /// A libvips operation built from arguments by name, given up when this goes.
    final class BuiltOperation {
        private let info: VipsOperationInfo
        private let operation: UnsafeMutablePointer<VipsOperation>

        /// Checks `arguments` against the operation's introspection, then builds it, under the
        /// vector-code lock when its build compiles vector code.
        init(_ name: String, _ arguments: [String: VipsValue]) throws(VipsError) {
            try start()
            guard let info = VipsOperationInfo.named(name) else {
                throw VipsError(operation: name, message: "libvips has no operation \"\(name)\"")
            }
            for key in arguments.keys.sorted() {
                guard let argument = info.argument(named: key), argument.isInput, !argument.isOutput else {
                    throw VipsError(operation: name, message: "\(name) has no input argument \"\(key)\"")
                }
            }
            let given = Set(arguments.keys.map { $0.replacingOccurrences(of: "-", with: "_") })
            for argument in info.inputs where argument.isRequired && !given.contains(argument.name) {
                throw VipsError(operation: name, message: "\(name): the required argument \"\(argument.name)\" is missing")
            }
            guard let created = pl_operation_new(name) else { throw VipsError.fromLibrary(operation: name) }
            var operation: UnsafeMutablePointer<VipsOperation>? = created
            do {
                // Keep every image argument alive until the operation is built.
                try withExtendedLifetime(arguments) { () throws(VipsError) in
                    for (key, value) in arguments.sorted(by: { $0.key < $1.key }) {
                        guard let argument = info.argument(named: key), argument.isInput, !argument.isOutput else {
                            throw VipsError(operation: name, message: "\(name) has no input argument \"\(key)\"")
                        }
                        try set(argument, to: value, on: created, operation: name)
                    }
                }
            } catch {
                VipsImage.serializingVectorCode { pl_operation_discard(created) }
                throw error
            }
            // Building may swap in an equal operation from libvips' cache.
            let built = withExtendedLifetime(arguments) { VipsImage.building(name) { pl_operation_build(&operation) } }
            guard built == 0, let operation else { throw VipsError.fromLibrary(operation: name) }
            self.info = info
            self.operation = operation
        }

        deinit {
            VipsImage.serializingVectorCode { pl_operation_release(operation) }
        }

        /// The outputs by name (images, numbers, booleans and arrays of numbers).
        var outputs: [String: VipsValue] {
            var outputs: [String: VipsValue] = [:]
            for argument in info.outputs {
                if let value = get(argument, from: operation) { outputs[argument.name] = value }
            }
            return outputs
        }
    }

    private static func set(
        _ argument: VipsOperationInfo.Argument, to value: VipsValue,
        on operation: UnsafeMutablePointer<VipsOperation>, operation name: String
    ) throws(VipsError) {
        func mismatch(_ detail: String = "") -> VipsError {
            VipsError(operation: name, message: "\(name): argument \"\(argument.name)\" expects \(argument.kind.typeName)\(detail)")
        }
        switch (argument.kind, value) {
        case (.integer(let range, _), _):
            guard let number = value.number, number.rounded() == number, let integer = Int(exactly: number) else { throw mismatch() }
            guard range.contains(integer) else { throw mismatch(" from \(range.lowerBound) to \(range.upperBound)") }
            pl_set_int(operation, argument.propertyName, argument.valueType, Int64(integer))
        case (.number(let range, _), _):
            guard let number = value.number else { throw mismatch() }
            guard range.contains(number) else { throw mismatch(" from \(range.lowerBound) to \(range.upperBound)") }
            pl_set_double(operation, argument.propertyName, number)
        case (.boolean, .boolean(let flag)):
            pl_set_bool(operation, argument.propertyName, flag ? 1 : 0)
        case (.enumeration(let names, _), .string(let nick)):
            guard let member = VipsOperationInfo.enumMembers(argument.valueType).first(where: { $0.name == nick }) else {
                throw mismatch(" (one of \(names.joined(separator: ", ")))")
            }
            pl_set_int(operation, argument.propertyName, argument.valueType, Int64(member.value))
        case (.enumeration(let names, _), .integer(let value)):
            guard VipsOperationInfo.enumMembers(argument.valueType).contains(where: { Int($0.value) == value }) else {
                throw mismatch(" (one of \(names.joined(separator: ", ")), or one of their values)")
            }
            pl_set_int(operation, argument.propertyName, argument.valueType, Int64(value))
        case (.flags(let names), .names), (.flags(let names), .string):
            guard let bits = flagBits(value, of: argument.valueType) else {
                throw mismatch(" (any of \(names.joined(separator: ", ")))")
            }
            pl_set_int(operation, argument.propertyName, argument.valueType, Int64(bits))
        case (.string, .string(let text)):
            pl_set_string(operation, argument.propertyName, text)
        case (.image, .image(let image)):
            pl_set_image(operation, argument.propertyName, image.pointer)
        case (.doubleArray, _):
            guard let numbers = numbers(value) else { throw mismatch() }
            numbers.withUnsafeBufferPointer { pl_set_array_double(operation, argument.propertyName, $0.baseAddress, Int32($0.count)) }
        case (.integerArray, .integers(let list)):
            let values = list.map { Int32(clamping: $0) }
            values.withUnsafeBufferPointer { pl_set_array_int(operation, argument.propertyName, $0.baseAddress, Int32($0.count)) }
        case (.imageArray, .images(let images)):
            var pointers: [UnsafeMutablePointer<CVips.VipsImage>?] = images.map(\.pointer)
            pointers.withUnsafeMutableBufferPointer {
                pl_set_array_image(operation, argument.propertyName, $0.baseAddress, Int32($0.count))
            }
        default:
            throw mismatch()
        }
    }

    /// The bits of the flags `value` names (one nick, or a list) in the flags type `type`, or nil
    /// when one of them is not among its members.
    private static func flagBits(_ value: VipsValue, of type: GType) -> Int32? {
        let list: [String]
        switch value {
        case .names(let nicks): list = nicks
        case .string(let nick): list = [nick]
        default: list = []
        }
        let members = VipsOperationInfo.enumMembers(type)
        var bits: Int32 = 0
        for nick in list {
            guard let member = members.first(where: { $0.name == nick }) else { return nil }
            bits |= member.value
        }
        return bits
    }

    /// `value` as an array of doubles: a list of numbers, or one number alone; nil when it is
    /// neither.
    private static func numbers(_ value: VipsValue) -> [Double]? {
        switch value {
        case .numbers(let list): list
        case .integers(let list): list.map(Double.init)
        default: value.number.map { [$0] }
        }
    }

    private static func get(_ argument: VipsOperationInfo.Argument, from operation: UnsafeMutablePointer<VipsOperation>) -> VipsValue? {
        switch argument.kind {
        case .integer: .integer(Int(pl_get_int(operation, argument.propertyName, argument.valueType)))
        case .number: .number(pl_get_double(operation, argument.propertyName))
        case .boolean: .boolean(pl_get_bool(operation, argument.propertyName) != 0)
        case .image: pl_get_image(operation, argument.propertyName).map { .image(VipsImage(taking: $0)) }
        case .doubleArray:
            {
                var count: Int32 = 0
                guard let values = pl_get_array_double(operation, argument.propertyName, &count) else { return nil }
                defer { g_free(values) }
                return .numbers(Array(UnsafeBufferPointer(start: values, count: Int(count))))
            }()
        default: nil
        }
    }
}

extension VipsImage {
    /// Runs the libvips operation `name` on this image, with `arguments` by name, and returns
    /// its output image: for any operation with one required input image left for this image
    /// once `arguments` are given (`flip`, `gaussblur`; `recomb` with its matrix `m`) and one
    /// required output image, so a plugin author needs no C.
    ///
    /// ```swift
    /// let mirrored = try image.applying("flip", ["direction": .string("horizontal")])
    /// ```
    public func applying(_ name: String, _ arguments: [String: VipsValue] = [:]) throws(VipsError) -> VipsImage {
        let (input, output) = try Self.imageArguments(of: name, given: Set(arguments.keys))
        var all = arguments
        all[input] = .image(self)
        guard let image = try Vips.call(name, all)[output]?.image else {
            throw VipsError(operation: name, message: "\(name) gave no output image")
        }
        return image
    }

    /// The image `name` with `arguments` would make from a `width`×`height` image of `bands`,
    /// built and not run: libvips works out an operation's header before any pixel. The image it
    /// is built on refuses to be read (its kill flag is set), so an operation that reads pixels
    /// as it is built (a statistic, a smart crop) fails, and gives nil, rather than reading them.
    public static func header(of name: String, _ arguments: [String: VipsValue], appliedToBlank width: Int, height: Int, bands: Int)
        -> VipsImage?
    {
        guard
            let blank = try? Vips.call("black", ["width": .integer(width), "height": .integer(height), "bands": .integer(bands)])["out"]?
                .image
        else { return nil }
        pl_set_kill(blank.pointer, 1)
        return try? blank.applying(name, arguments)
    }

    /// The names of an operation's one required input image not among `given`, and of its one
    /// required output image.
    static func imageArguments(of name: String, given: Set<String> = []) throws(VipsError) -> (input: String, output: String) {
        try Vips.start()
        guard let info = VipsOperationInfo.named(name) else {
            throw VipsError(operation: name, message: "libvips has no operation \"\(name)\"")
        }
        let given = Set(given.map { $0.replacingOccurrences(of: "-", with: "_") })
        let inputs = info.inputs.filter { $0.isRequired && $0.kind == .image && !given.contains($0.name) }
        let outputs = info.outputs.filter { $0.isRequired && $0.kind == .image }
        guard inputs.count == 1, let input = inputs.first, outputs.count == 1, let output = outputs.first else {
            throw VipsError(
                operation: name,
                message: "\(name) does not take exactly one input image (besides the arguments given) and give one output image")
        }
        return (input.name, output.name)
    }
}

extension VipsImage {
    /// A matrix image (one band of doubles), as operations such as `recomb` and `conv` take:
    /// `rows` of equal length, top to bottom.
    public static func matrix(_ rows: [[Double]]) throws(VipsError) -> VipsImage {
        try Vips.start()
        guard let width = rows.first?.count, width > 0, rows.allSatisfy({ $0.count == width }) else {
            throw VipsError(operation: "matrix", message: "a matrix needs rows of one non-zero length")
        }
        let values = rows.flatMap { $0 }
        let image = values.withUnsafeBufferPointer {
            vips_image_new_matrix_from_array(Int32(width), Int32(rows.count), $0.baseAddress, Int32($0.count))
        }
        guard let image else { throw VipsError.fromLibrary(operation: "matrix") }
        return VipsImage(taking: image)
    }
}
