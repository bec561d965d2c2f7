import Foundation

/// Reading an output's `"inputs"`: the subset of the file's inputs it is made for.
extension DefinitionBuilder {
    /// The output's subset of the inputs, or nil when it has none (or it is mistyped, which the
    /// shape check reports).
    mutating func readInputSubset(_ node: JSONNode, at path: String) -> InputSubset? {
        guard case .array(let items)? = node["inputs"]?.value else { return nil }
        let patterns = items.compactMap { item -> String? in
            if case .string(let text) = item.value, !text.isEmpty { text } else { nil }
        }
        guard patterns.count == items.count, !patterns.isEmpty else { return nil }
        guard var subset = InputSubset(patterns: patterns) else {
            problems.append(
                .init(
                    path: join(path, "inputs"), location: node["inputs"]?.location,
                    message: "the brace sets of the globs stand for more than \(InputEnumerator.maximumAlternatives) globs"))
            return nil
        }
        subset.location = node["inputs"]?.location
        return subset
    }
}
