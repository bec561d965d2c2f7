import Foundation

/// Reading values of the document: through the declared options (so that their defaults
/// apply), or as plain strings, lists and maps.
extension DefinitionBuilder {
    /// The values of the object at `node`, read through `options`, whose defaults fill in what it omits.
    func reader(_ node: JSONNode?, _ options: [Option], ignoring ignored: String? = nil) -> ProcessorOptions {
        guard case .object(let members)? = node?.value else { return ProcessorOptions(values: [:], definitions: options) }
        let values = Dictionary(members.filter { $0.key != ignored }.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return ProcessorOptions(values: values, definitions: options)
    }

    /// The values of the top-level section `section`, read through its declared options.
    func reader(_ node: JSONNode?, optionsOf section: String) -> ProcessorOptions {
        let option = PipelineFormat.topLevelOptions(processors: processors).first { $0.name == section }
        switch option?.shape {
        case .object(let options)?:
            return reader(node, options)
        case .anyOf(let shapes)?:
            // A section that may also be a shorthand (`"manifest": "PATH"`) reads as its object form.
            for case .object(let options) in shapes { return reader(node, options) }
            return reader(node, [])
        default:
            return reader(node, [])
        }
    }

    /// The strings of an array of strings (checked by its shape); [] when absent.
    func stringArray(_ node: JSONNode?) -> [String] {
        guard case .array(let items)? = node?.value else { return [] }
        return items.compactMap { if case .string(let value) = $0.value { value } else { nil } }
    }

    /// The string members of an object (checked by its shape); [:] when absent.
    func stringMap(_ node: JSONNode?) -> [String: String] {
        guard case .object(let members)? = node?.value else { return [:] }
        var map: [String: String] = [:]
        for member in members { if case .string(let value) = member.value.value { map[member.key] = value } }
        return map
    }

    /// One entry of `inputs`: a pattern, or a list file.
    func inputEntry(_ node: JSONNode) -> InputEntry? {
        switch node.value {
        case .string(let text): .pattern(text)
        case .object: node["list"].flatMap { if case .string(let path) = $0.value { .list(path) } else { nil } }
        default: nil
        }
    }

    /// An S3 output's `cacheControl` and `metadata`. Metadata names become HTTP header names, so
    /// they are kept to what every S3 server stores as written; `pipeline-` is the runner's own.
    mutating func readObjectSettings(_ node: JSONNode, at path: String, into output: inout OutputDefinition) {
        if case .string(let value)? = node["cacheControl"]?.value {
            output.cacheControl = value
            checkHeaderValue(value, at: join(path, "cacheControl"), location: node["cacheControl"]?.location)
        }
        output.metadata = stringMap(node["metadata"])
        for name in output.metadata.keys.sorted() {
            let valid =
                !name.isEmpty && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            if !valid || name.hasPrefix("pipeline-") {
                problems.append(
                    .init(
                        path: join(path, "metadata") + "." + name, location: node["metadata"]?[name]?.location,
                        message: "metadata name \(name.quotedValue) must be lower-case letters, digits and -, and not start with pipeline-")
                )
            }
            if let value = output.metadata[name] {
                checkHeaderValue(value, at: join(path, "metadata") + "." + name, location: node["metadata"]?[name]?.location)
            }
        }
    }

    /// A problem at `path` when `value`, sent as an HTTP header's value, is not printable ASCII:
    /// a line break in it would end the header and start another of the file's making.
    mutating func checkHeaderValue(_ value: String, at path: String, location: SourceLocation?) {
        guard !value.unicodeScalars.allSatisfy({ (" "..."~").contains($0) }) else { return }
        problems.append(
            .init(path: path, location: location, message: "must be printable ASCII on one line (it is sent as an HTTP header)"))
    }

    /// A warning for each option an output gives that changes nothing: `cacheControl` and
    /// `metadata` for a file on disk, which keeps neither, and `placeholderOptions` without
    /// `placeholders`. Accepted, as a file moved between disk and a bucket keeps working, but
    /// named, so that nobody takes them for applied.
    mutating func warnOfOptionsThatDoNothing(_ node: JSONNode, at path: String, inStore: Bool) {
        if !inStore {
            for name in ["cacheControl", "metadata"] where node[name] != nil {
                warnings.append("\(join(path, name)) does nothing: it is stored with S3 objects, and this output's path is a local file")
            }
        }
        if node["placeholderOptions"] != nil, node["placeholders"] == nil {
            warnings.append("\(join(path, "placeholderOptions")) does nothing: the output asks for no placeholders")
        }
    }

    /// The placeholders an output asks the manifest for, and how they are made.
    func readPlaceholders(_ node: JSONNode, into output: inout OutputDefinition) {
        if case .array(let kinds)? = node["placeholders"]?.value {
            output.placeholders = kinds.compactMap { if case .string(let name) = $0.value { PlaceholderKind(rawValue: name) } else { nil } }
        }
        var definitions: [Option] = []
        if let option = PipelineFormat.outputOptions(processors: processors).first(where: { $0.name == "placeholderOptions" }),
            case .object(let options) = option.shape
        {
            definitions = options
        }
        let options = reader(node["placeholderOptions"], definitions)
        if let settings = try? PlaceholderSettings(
            lqipWidth: options.int("lqipWidth"), lqipQuality: options.int("lqipQuality"),
            blurhashXComponents: options.int("blurhashX"), blurhashYComponents: options.int("blurhashY"))
        {
            output.placeholderSettings = settings
        }
    }
}
