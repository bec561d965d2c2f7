/// Checks a JSON document against a `ValueShape`, collecting every problem with its path and
/// position rather than stopping at the first.
struct ShapeValidator {
    private(set) var problems: [PipelineFileError.Problem] = []
    /// What was read but is better written otherwise (a key spelt `colour`), for warnings.
    private(set) var notes: [String] = []

    mutating func check(_ node: JSONNode, against shape: ValueShape, at path: String) {
        switch shape {
        case .boolean:
            guard case .bool = node.value else { return expected("a boolean", node, path) }
        case .integer(let range):
            guard case .number(let number, let isInteger) = node.value, isInteger else {
                return expected("an integer", node, path)
            }
            if number < Double(range.lowerBound) || number > Double(range.upperBound) {
                report(path, node.location, "\(node.jsonText) is out of range: expected \(describe(range))")
            }
        case .number(let range):
            guard case .number(let number, _) = node.value else { return expected("a number", node, path) }
            if !range.contains(number) {
                report(path, node.location, "\(node.jsonText) is out of range: expected \(describe(range))")
            }
        case .string(let nonEmpty):
            guard case .string(let text) = node.value else { return expected("a string", node, path) }
            if nonEmpty, text.isEmpty { report(path, node.location, "must not be empty") }
        case .choice(let values):
            checkChoice(node, values: values, at: path)
        case .duration:
            // A number, or a string written as a duration, that is past the longest one.
            let isDuration =
                switch node.value {
                case .number: true
                case .string(let text): Units.unboundedSeconds(in: text) != nil
                default: false
                }
            if isDuration, Units.seconds(in: node) == nil {
                return report(path, node.location, "\(node.jsonText) is out of range: expected a duration of 0 to a year (31536000 s)")
            }
            guard Units.seconds(in: node) != nil else {
                return expected("a duration such as \"30s\", \"500ms\", \"2m\" or a number of seconds", node, path)
            }
        case .byteSize:
            checkByteSize(node, at: path)
        case .colour:
            guard Units.colour(in: node) != nil else {
                // A list of the right length with a number past 255 (or below 0) says which.
                if case .array(let items) = node.value, items.count == 3 || items.count == 4,
                    let index = items.firstIndex(where: { item in
                        if case .number(let number, _) = item.value { !(0...255).contains(number) } else { false }
                    })
                {
                    return report(
                        "\(path)[\(index)]", items[index].location,
                        "\(items[index].jsonText) is out of range: each of a colour's components is 0–255")
                }
                return expected("a colour such as \"#ffffff\", \"#0008\", \"white\" or [255, 255, 255]", node, path)
            }
        case .pathTemplate:
            checkPathTemplate(node, at: path)
        case .stringMap:
            checkStringMap(node, at: path)
        case .array(let itemShape, let minCount):
            checkArray(node, of: itemShape, minCount: minCount, at: path)
        case .object(let options):
            checkObject(node, options: options, at: path, ignoring: [])
        case .anyOf(let shapes):
            checkAnyOf(node, shapes: shapes, at: path)
        case .tagged(let key, let variants):
            checkTagged(node, key: key, variants: variants, at: path)
        case .singleKey(let variants):
            checkSingleKey(node, variants: variants, at: path)
        }
    }

    /// One of `values`, or a suggestion of the nearest.
    private mutating func checkChoice(_ node: JSONNode, values: [String], at path: String) {
        guard case .string(let text) = node.value else {
            return expected("one of \(list(values))", node, path)
        }
        if !values.contains(text) {
            let hint = NearestName.suggestion(for: text, among: values).map { "; did you mean \"\($0)\"?" } ?? ""
            report(path, node.location, "unknown value \(text.quotedValue): expected one of \(list(values))\(hint)")
        }
    }

    /// A byte count, or a size with its unit.
    private mutating func checkByteSize(_ node: JSONNode, at path: String) {
        if case .number(let number, true) = node.value, number >= 0 {
            // Loading turns it into an Int64; found by the pipeline-file fuzz test.
            if number >= 9e18 { report(path, node.location, "\(node.jsonText) is out of range: expected at most 9e18 bytes") }
            return
        }
        guard case .string(let text) = node.value, Units.bytes(in: text) != nil else {
            return expected("a size such as \"50MB\", \"512KiB\" or a byte count", node, path)
        }
    }

    /// A path template whose placeholders are known.
    private mutating func checkPathTemplate(_ node: JSONNode, at path: String) {
        guard case .string(let text) = node.value else { return expected("a path template", node, path) }
        do {
            _ = try PathTemplate(text)
        } catch {
            report(path, node.location, error.message)
        }
    }

    /// An object whose values are all strings.
    private mutating func checkStringMap(_ node: JSONNode, at path: String) {
        // Named by its type alone: a map of strings given as one string is, as often as not,
        // a header's credentials.
        guard case .object(let members) = node.value else {
            return report(path, node.location, "expected an object of strings, found \(node.typeName)")
        }
        for member in members {
            guard case .string = member.value.value else {
                expected("a string", member.value, join(path, member.key))
                continue
            }
        }
    }

    /// An array of at least `minCount` items, each checked against `itemShape`.
    private mutating func checkArray(_ node: JSONNode, of itemShape: ValueShape, minCount: Int, at path: String) {
        guard case .array(let items) = node.value else { return expected("an array", node, path) }
        if items.count < minCount {
            report(path, node.location, "expected at least \(minCount) item\(minCount == 1 ? "" : "s")")
        }
        for (index, item) in items.enumerated() {
            check(item, against: itemShape, at: "\(path)[\(index)]")
        }
    }

    /// `variant` is the variant of a tagged shape the object is, beside the others: a key only
    /// other variants take (a GIF's `quality`) is named as theirs, not as a misspelling.
    private mutating func checkObject(
        _ node: JSONNode, options: [Option], at path: String, ignoring ignored: Set<String>,
        variant: (key: String, name: String, all: [Variant])? = nil
    ) {
        guard case .object(let members) = node.value else { return expected("an object", node, path) }
        let known = options.map(\.name)
        for member in members where !ignored.contains(member.key) {
            let memberPath = join(path, member.key)
            if let spelling = Option.cssSpelling(of: member.key, among: known, beside: members.map(\.key)),
                let option = options.first(where: { $0.name == spelling })
            {
                notes.append(
                    "\(memberPath) (line \(member.keyLocation.line)): \"\(member.key)\" is read as \"\(spelling)\", "
                        + "the spelling the steps use, as CSS does")
                check(member.value, against: option.shape, at: join(path, spelling))
                continue
            }
            guard let option = options.first(where: { $0.name == member.key }) else {
                let takers = variant?.all.filter { $0.options.contains { $0.name == member.key } }.map(\.name) ?? []
                let hint =
                    if let variant, !takers.isEmpty {
                        "; \(variant.key) \(variant.name.quotedValue) has no such key (\(list(takers)) \(takers.count == 1 ? "has" : "have") it)"
                    } else {
                        NearestName.suggestion(for: member.key, among: known).map { "; did you mean \"\($0)\"?" } ?? ""
                    }
                let expected = known.isEmpty ? "no keys are allowed here" : "known keys are \(list(known))"
                report(memberPath, member.keyLocation, "unknown key \(member.key.quotedValue)\(hint) (\(expected))")
                continue
            }
            if let reason = option.mismatchReason, !accepts(option.shape, member.value) {
                expected(typeName(option.shape), member.value, memberPath, because: reason)
                continue
            }
            check(member.value, against: option.shape, at: memberPath)
        }
        let given = Set(members.map { Option.cssSpelling(of: $0.key, among: known, beside: []) ?? $0.key })
        for option in options where option.isRequired && !given.contains(option.name) {
            report(path, node.location, "missing required key \"\(option.name)\"")
        }
    }

    private mutating func checkAnyOf(_ node: JSONNode, shapes: [ValueShape], at path: String) {
        // A number in quotes where a number or a word may go (`"widths": ["640"]`): the mistake
        // is the quotes, which a message listing only the words would not show.
        if case .string(let text) = node.value, Self.isJSONNumber(text),
            !shapes.contains(where: { accepts($0, node) && !isChoice($0) }),
            shapes.contains(where: isNumeric), !shapes.contains(where: { isChoice($0, holding: text) })
        {
            return expected(shapes.map(typeName).joined(separator: " or "), node, path, because: "write a number without quotes")
        }
        // Check against the first alternative of the node's JSON type, so messages speak of it.
        for shape in shapes where accepts(shape, node) {
            return check(node, against: shape, at: path)
        }
        expected(shapes.map(typeName).joined(separator: " or "), node, path)
    }

    private mutating func checkTagged(_ node: JSONNode, key: String, variants: [Variant], at path: String) {
        guard case .object = node.value else { return expected("an object", node, path) }
        let names = variants.map(\.name)
        guard let tag = node[key] else {
            return report(path, node.location, "missing required key \"\(key)\" (one of \(list(names)))")
        }
        guard case .string(let name) = tag.value, let variant = variants.first(where: { $0.name == name }) else {
            return check(tag, against: .choice(names), at: join(path, key))
        }
        checkObject(node, options: variant.options, at: path, ignoring: [key], variant: (key, name, variants))
    }

    private mutating func checkSingleKey(_ node: JSONNode, variants: [Variant], at path: String) {
        let names = variants.map(\.name)
        guard case .object(let members) = node.value, members.count == 1, let member = members.first else {
            return report(path, node.location, "expected an object with exactly one key naming the step (\(list(names)))")
        }
        guard let variant = variants.first(where: { $0.name == member.key }) else {
            let hint = NearestName.suggestion(for: member.key, among: names).map { "; did you mean \"\($0)\"?" } ?? ""
            return report(
                join(path, member.key), member.keyLocation, "unknown step \(member.key.quotedValue)\(hint) (known steps are \(list(names)))"
            )
        }
        var ignored: Set<String> = []
        if variant.acceptsOtherKeys, case .object(let optionMembers) = member.value.value {
            // The processor checks these itself when it is built (with libvips' introspection for `vips`).
            ignored = Set(optionMembers.map(\.key)).subtracting(variant.options.map(\.name))
        }
        checkObject(member.value, options: variant.options, at: join(path, member.key), ignoring: ignored)
    }

    // MARK: Reporting

    mutating func report(_ path: String, _ location: SourceLocation?, _ message: String) {
        problems.append(PipelineFileError.Problem(path: path, location: location, message: message))
    }

    private mutating func expected(_ what: String, _ node: JSONNode, _ path: String, because reason: String? = nil) {
        let found: String
        if case .string(let text) = node.value {
            found = "the string \(JSONNode.quoted(text.cutForMessage))"
        } else {
            found = node.typeName
        }
        report(path, node.location, "expected \(what), found \(found)" + (reason.map { ": \($0)" } ?? ""))
    }

    private func accepts(_ shape: ValueShape, _ node: JSONNode) -> Bool {
        switch (shape, node.value) {
        case (.boolean, .bool): true
        case (.integer, .number), (.number, .number), (.byteSize, .number), (.duration, .number): true
        case (.string, .string), (.choice, .string), (.duration, .string), (.byteSize, .string),
            (.colour, .string), (.colour, .array), (.pathTemplate, .string):
            true
        case (.array, .array): true
        case (.object, .object), (.tagged, .object), (.singleKey, .object), (.stringMap, .object): true
        case (.anyOf(let shapes), _): shapes.contains { accepts($0, node) }
        default: false
        }
    }

    /// Whether `text` is a number as JSON writes one: not Swift's `inf`, `nan` or `0x10`, which
    /// unquoted are no JSON.
    private static func isJSONNumber(_ text: String) -> Bool {
        text.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/) != nil
    }

    private func isNumeric(_ shape: ValueShape) -> Bool {
        switch shape {
        case .integer, .number: true
        default: false
        }
    }

    /// Whether `shape` is a choice of words, holding `text` among them when it is given.
    private func isChoice(_ shape: ValueShape, holding text: String? = nil) -> Bool {
        guard case .choice(let values) = shape else { return false }
        return text.map(values.contains) ?? true
    }

    private func typeName(_ shape: ValueShape) -> String {
        switch shape {
        case .boolean: "a boolean"
        case .integer: "an integer"
        case .number: "a number"
        // A choice and an object name their values and keys: of the alternatives of an anyOf
        // (`"formats": ["avif", {"format": "webp"}]`), a message then shows each form.
        case .choice(let names) where names.count <= 8: "one of \(list(names))"
        case .string, .choice, .pathTemplate: "a string"
        case .duration: "a duration"
        case .colour: "a colour"
        case .byteSize: "a size"
        case .array: "an array"
        case .object(let options) where !options.isEmpty && options.count <= 4: "an object with \(list(options.map(\.name)))"
        case .tagged(let key, _): "an object with \(list([key]))"
        case .object, .singleKey, .stringMap: "an object"
        case .anyOf(let shapes): shapes.map(typeName).joined(separator: " or ")
        }
    }

    private func describe<Bound: Comparable>(_ range: ClosedRange<Bound>) -> String {
        "\(range.lowerBound)…\(range.upperBound)"
    }

    private func list(_ names: [String]) -> String {
        names.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}

/// `outputs[0]` + `encode` → `outputs[0].encode`.
/// A key past `String.quotedValueLimit` characters is cut: the path is for messages.
func join(_ path: String, _ key: String) -> String {
    let key = key.cutForMessage
    return path.isEmpty ? key : "\(path).\(key)"
}
