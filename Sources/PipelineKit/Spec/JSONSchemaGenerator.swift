/// Prints the pipeline-file format as a JSON Schema (draft 2020-12), from the same shapes the
/// validator checks, so editors complete and check pipeline files exactly as `pipeline` does.
public enum JSONSchemaGenerator {
    /// The JSON Schema dialect the generated schemas declare.
    public static let schemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// The schema for pipeline files that may use `processors`' steps, as pretty-printed JSON.
    public static func schema(processors: ProcessorRegistry) -> String {
        var root = node(for: PipelineFormat.shape(processors: processors))
        root = prepend(
            [
                ("$schema", JSONNode(plain: schemaDialect)),
                ("$id", JSONNode(plain: "https://github.com/pipeline/pipeline/schema/pipeline-v\(PipelineFormat.version).json")),
                ("title", JSONNode(plain: "pipeline file, version \(PipelineFormat.version)")),
                (
                    "description",
                    JSONNode(plain: "A declarative image pipeline: inputs, stage settings and the outputs made from every input.")
                ),
            ], to: root)
        return root.prettyText()
    }

    static func node(for shape: ValueShape) -> JSONNode {
        switch shape {
        case .boolean:
            return object([("type", "boolean")])
        case .integer(let range):
            return object([("type", "integer"), ("minimum", range.lowerBound), ("maximum", range.upperBound)])
        case .number(let range):
            return object([("type", "number"), ("minimum", range.lowerBound), ("maximum", range.upperBound)])
        case .string(let nonEmpty):
            return object([("type", "string")] + (nonEmpty ? [("minLength", 1)] : []))
        case .choice(let values):
            return object([("enum", JSONNode(.array(values.map { JSONNode(plain: $0) })))])
        case .duration:
            let text = object([("type", "string"), ("pattern", "^[0-9]+(\\.[0-9]+)? *(ms|s|m|h)$")])
            let seconds = object([("type", "number"), ("minimum", 0), ("maximum", Units.longestDuration)])
            return object([("anyOf", JSONNode(.array([text, seconds])))])
        case .byteSize:
            return byteSizeNode
        case .colour:
            return colourNode
        case .pathTemplate:
            return object([("type", "string"), ("minLength", 1)])
        case .stringMap:
            return object([("type", "object"), ("additionalProperties", object([("type", "string")]))])
        case .array(let items, let minCount):
            return object([("type", "array"), ("items", node(for: items))] + (minCount > 0 ? [("minItems", minCount)] : []))
        case .object(let options):
            return closedObject(options, extra: [])
        case .anyOf(let shapes):
            return object([("anyOf", JSONNode(.array(shapes.map(node(for:)))))])
        case .tagged(let key, let variants):
            return taggedNode(key: key, variants: variants)
        case .singleKey(let variants):
            return singleKeyNode(variants)
        }
    }

    /// A byte count, or a size with its unit.
    private static var byteSizeNode: JSONNode {
        object([
            (
                "anyOf",
                JSONNode(
                    .array([
                        object([("type", "integer"), ("minimum", 0)]),
                        object([("type", "string"), ("pattern", "^[0-9]+(\\.[0-9]+)? *([KMGT]i?B|kB|[kmgt]i?b|[Bb])?$")]),
                    ]))
            )
        ])
    }

    /// The colour names, in any case, as `Units.colour(in:)` reads them: `[wW][hH]…`, since a
    /// JSON Schema pattern has no flag for case.
    private static var colourNames: String {
        ["white", "black", "transparent"].map { name in name.map { "[\($0)\($0.uppercased())]" }.joined() }.joined(separator: "|")
    }

    /// A colour: hex or a name, or 3 or 4 numbers.
    private static var colourNode: JSONNode {
        let component = object([("type", "number"), ("minimum", 0), ("maximum", 255)])
        return object([
            (
                "anyOf",
                JSONNode(
                    .array([
                        object([
                            ("type", "string"),
                            ("pattern", "^(#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|\(colourNames))$"),
                        ]),
                        object([("type", "array"), ("items", component), ("minItems", 3), ("maxItems", 4)]),
                    ]))
            )
        ])
    }

    /// An object tagged by `key`: one if/then per variant, each closed over its own keys plus the tag.
    private static func taggedNode(key: String, variants: [Variant]) -> JSONNode {
        let cases = variants.map { variant in
            object([
                ("if", object([("properties", object([(key, object([("const", variant.name)]))]))])),
                (
                    "then",
                    closedObject(variant.options, extra: [(key, object([("const", variant.name), ("description", variant.summary)]))])
                ),
            ])
        }
        return object([
            ("type", "object"),
            ("required", JSONNode(.array([JSONNode(plain: key)]))),
            ("properties", object([(key, object([("enum", JSONNode(.array(variants.map { JSONNode(plain: $0.name) })))]))])),
            ("allOf", JSONNode(.array(cases))),
        ])
    }

    /// An object of one key naming the variant, its value the variant's options.
    private static func singleKeyNode(_ variants: [Variant]) -> JSONNode {
        let alternatives = variants.map { variant in
            object([
                ("type", "object"),
                ("description", variant.summary),
                ("properties", object([(variant.name, closedObject(variant.options, extra: [], open: variant.acceptsOtherKeys))])),
                ("required", JSONNode(.array([JSONNode(plain: variant.name)]))),
                ("additionalProperties", false),
            ])
        }
        return object([("oneOf", JSONNode(.array(alternatives)))])
    }

    private static func closedObject(_ options: [Option], extra: [(String, any Sendable)], open: Bool = false) -> JSONNode {
        let properties =
            extra
            + options.map { option -> (String, any Sendable) in
                var property = node(for: option.shape)
                var annotations: [(String, any Sendable)] = [("description", option.help)]
                if let value = option.defaultValue { annotations.append(("default", value)) }
                property = prepend(annotations, to: property)
                return (option.name, property)
            }
        let required = options.filter(\.isRequired).map { JSONNode(plain: $0.name) } + extra.map { JSONNode(plain: $0.0) }
        return object(
            [("type", "object"), ("properties", object(properties))]
                + (required.isEmpty ? [] : [("required", JSONNode(.array(required)))])
                + [("additionalProperties", open)])
    }

    private static func object(_ members: [(String, any Sendable)]) -> JSONNode {
        let location = SourceLocation(line: 0, column: 0)
        return JSONNode(.object(members.map { JSONNode.Member(key: $0.0, keyLocation: location, value: JSONNode(plain: $0.1)) }))
    }

    private static func prepend(_ members: [(String, any Sendable)], to node: JSONNode) -> JSONNode {
        guard case .object(let existing) = node.value else { return node }
        let location = SourceLocation(line: 0, column: 0)
        let added = members.map { JSONNode.Member(key: $0.0, keyLocation: location, value: JSONNode(plain: $0.1)) }
        return JSONNode(.object(added + existing.filter { member in !members.contains { $0.0 == member.key } }))
    }
}

extension JSONNode {
    /// The value as indented JSON text, two spaces a level, keys in their stored order.
    public func prettyText(indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            if items.allSatisfy({ if case .object = $0.value { false } else if case .array = $0.value { false } else { true } }) {
                return "[" + items.map(\.jsonText).joined(separator: ", ") + "]"
            }
            return "[\n" + items.map { inner + $0.prettyText(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members) where !members.isEmpty:
            return "{\n"
                + members.map { inner + JSONNode.quoted($0.key) + ": " + $0.value.prettyText(indent: inner) }
                .joined(separator: ",\n") + "\n\(indent)}"
        default:
            return jsonText
        }
    }
}
