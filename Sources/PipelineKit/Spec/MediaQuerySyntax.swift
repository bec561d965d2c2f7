import Foundation

/// The mistakes in a media query that make a browser drop it: a `<source media>` it cannot
/// parse matches no screen (`not all`), so its crop is made and never shown, and a blank one
/// matches every screen. Only such plain slips are judged; a query of a form not looked into
/// here (a range, a feature of another kind) passes, as a browser may take it.
enum MediaQuerySyntax {
    /// Why a browser cannot take `media`, with the query it likely meant where one is clear;
    /// nil when nothing here is wrong with it.
    static func fault(of media: String) -> String? {
        let text = media.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return "is blank, which a browser takes as every screen; name the screens, such as (max-width: 640px)" }
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if depth < 0 { break }
        }
        if depth != 0 { return "has parentheses that do not pair, so a browser matches it to no screen" }
        for query in topLevelParts(of: text, splitBy: ",") {
            if let fault = fault(ofQuery: query.trimmingCharacters(in: .whitespacesAndNewlines)) { return fault }
        }
        return nil
    }

    /// Why one query of a comma-separated list is dropped, or nil.
    private static func fault(ofQuery query: String) -> String? {
        if query.isEmpty { return "has an empty query between its commas, so a browser matches it to no screen" }
        let outside = topLevelText(of: query)
        let words = outside.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        if outside.contains(":") {
            // A lone feature is plainly one that lost its parentheses.
            let lone = !words.contains { ["and", "or", "not", "only"].contains($0) }
            return "has a feature outside parentheses, so a browser matches it to no screen"
                + (lone ? "; write (\(query))" : "; write each feature in parentheses, such as (max-width: 640px)")
        }
        if let last = words.last, ["and", "or", "not", "only"].contains(last), !query.hasSuffix(")") {
            return "ends in \"\(last)\" with no condition after it, so a browser matches it to no screen"
        }
        for feature in features(of: query) {
            let parts = feature.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2, isLength(feature: parts[0]), let number = Double(parts[1]), number != 0 else { continue }
            return "gives \(parts[0]) the number \(parts[1]) with no unit, so a browser matches it to no screen; "
                + "write (\(parts[0]): \(parts[1])px)"
        }
        return nil
    }

    /// Whether the feature `name` takes a length: the widths and heights of the viewport and
    /// the device, with their `min-` and `max-` forms.
    private static func isLength(feature name: String) -> Bool {
        let base = name.hasPrefix("min-") || name.hasPrefix("max-") ? String(name.dropFirst(4)) : name
        return ["width", "height", "device-width", "device-height", "inline-size", "block-size"].contains(base)
    }

    /// `text` cut at each `separator` outside parentheses.
    private static func topLevelParts(of text: String, splitBy separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == separator, depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        return parts + [current]
    }

    /// What of `query` is outside every parenthesis.
    private static func topLevelText(of query: String) -> String {
        var depth = 0
        var outside = ""
        for character in query {
            if character == "(" { depth += 1 }
            if depth == 0 { outside.append(character) } else { outside.append(" ") }
            if character == ")" { depth -= 1 }
        }
        return outside
    }

    /// The innermost parenthesised parts of `query`, without their parentheses: `max-width: 640px`.
    private static func features(of query: String) -> [String] {
        var features: [String] = []
        var current: String?
        for character in query {
            if character == "(" {
                current = ""
            } else if character == ")" {
                if let feature = current { features.append(feature) }
                current = nil
            } else {
                current?.append(character)
            }
        }
        return features
    }
}
