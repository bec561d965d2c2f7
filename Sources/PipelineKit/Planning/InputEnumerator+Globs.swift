import Foundation

/// Matching names against globs and expanding brace sets (`{jpg,png}`, `{01..12}`), apart from
/// the walk that finds the files.
extension InputEnumerator {
    /// Whether a path component is matched as a pattern: it has a wildcard, or a backslash
    /// before a wildcard, a brace or another backslash, which takes that character as it is
    /// (`photo \\[1].jpg`). Any other backslash is part of the name (`x\\y.jpg`).
    static func isGlob(_ component: String) -> Bool {
        var escaping = false
        for character in component {
            if escaping, Glob.escaped.contains(character) { return true }
            escaping = character == "\\" && !escaping
            if character == "*" || character == "?" || character == "[" { return true }
        }
        return false
    }

    /// Shell-style matching of one name; a leading dot must be matched explicitly.
    static func matches(_ pattern: String, _ name: String, caseInsensitive: Bool = false) -> Bool {
        let pattern = pattern.utf8.contains(UInt8(ascii: "\\")) ? escapingPlainBackslashes(pattern) : pattern
        return fnmatch(pattern, name, FNM_PERIOD | (caseInsensitive ? caseFoldFlag : 0)) == 0
    }

    /// `pattern` as fnmatch must read it: a backslash before anything but a wildcard, a brace or
    /// a backslash is part of the name (`x\\y*`), where fnmatch would take it as an escape.
    private static func escapingPlainBackslashes(_ pattern: String) -> String {
        var result = ""
        var characters = pattern.makeIterator()
        while let character = characters.next() {
            guard character == "\\" else {
                result.append(character)
                continue
            }
            guard let next = characters.next() else {
                result += "\\\\"
                break
            }
            // Two backslashes are one of the name for fnmatch too: kept as they are.
            result += Glob.escaped.contains(next) ? "\\" : "\\\\"
            result.append(next)
        }
        return result
    }

    /// glibc's FNM_CASEFOLD, which Swift's Glibc module does not export (it is a GNU extension).
    private static let caseFoldFlag: Int32 = 1 << 4

    /// The most patterns one input's brace sets may make: the sets multiply, and each pattern is a
    /// walk of the file system.
    static let maximumAlternatives = 256

    /// The patterns `pattern`'s brace sets stand for, in order: `*.{jpg,png}` is `*.jpg` and
    /// `*.png`; sets nest (`{a,b{c,d}}` is `a`, `bc`, `bd`); a range stands for each number or
    /// letter in it (`{1..3}`, `{01..10}` padded to the wider end, `{a..c}`, `{10..1..3}` by a
    /// step). Braces with neither a comma at their own level nor a range (`{a}`), unclosed or
    /// escaped ones are literal text, as fast-glob takes them. Nil when the sets make more than
    /// `maximumAlternatives` patterns.
    static func braceAlternatives(_ pattern: String) -> [String]? {
        let characters = Array(pattern)
        // The first brace set: its opening brace, the commas at its level and its closing brace,
        // and its choices when it is a range.
        var stack: [(open: Int, commas: [Int])] = []
        var index = 0
        var found: (open: Int, close: Int, choices: [String])?
        while index < characters.count, found == nil {
            switch characters[index] {
            case "\\": index += 1
            case "{": stack.append((index, []))
            case ",": if !stack.isEmpty { stack[stack.count - 1].commas.append(index) }
            case "}":
                guard let set = stack.popLast(), stack.isEmpty else { break }
                if !set.commas.isEmpty {
                    let bounds = [set.open] + set.commas + [index]
                    found = (set.open, index, zip(bounds, bounds.dropFirst()).map { String(characters[($0 + 1)..<$1]) })
                } else if let range = braceRange(String(characters[(set.open + 1)..<index])) {
                    guard case .choices(let choices) = range else { return nil }
                    found = (set.open, index, choices)
                }
            default: break
            }
            index += 1
        }
        guard let set = found else { return [pattern] }
        let head = String(characters[..<set.open]), tail = String(characters[(set.close + 1)...])
        var alternatives: [String] = []
        for choice in set.choices {
            // Each choice may hold sets of its own, and the tail further sets: expanded in turn.
            guard let expanded = braceAlternatives(head + choice + tail) else { return nil }
            alternatives += expanded
            if alternatives.count > maximumAlternatives { return nil }
        }
        return alternatives
    }

    /// What a brace set without commas stands for when it is a range.
    private enum BraceRange {
        case choices([String])
        case tooMany
    }

    /// The numbers or letters a brace range stands for (`1..3`, `01..10`, `a..c`, `10..1..3`),
    /// first to last, or nil when `text` is not a range. Numbers are padded with zeros to the
    /// wider end when either end starts with a zero, as bash pads them; letters go from one to
    /// the other of the same case, so that no glob character falls between them.
    private static func braceRange(_ text: String) -> BraceRange? {
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2 || parts.count == 3 else { return nil }
        // At most 18 characters: no end or step, nor their difference, overflows.
        let isInteger = { (part: String) in
            part.count <= 18 && Int(part) != nil && part.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-") }
        }
        let step = parts.count == 3 ? (isInteger(parts[2]) ? Int(parts[2]).map(abs) : nil) : 1
        guard let step, step > 0 else { return nil }
        // The zero-padded width of numbers (0: not padded); nil for letters.
        let ends: (first: Int, last: Int, width: Int?)
        if isInteger(parts[0]), isInteger(parts[1]), let first = Int(parts[0]), let last = Int(parts[1]) {
            let padded = parts[0...1].contains { $0.trimmingCharacters(in: ["-"]).hasPrefix("0") && $0.count > 1 }
            ends = (first, last, padded ? max(parts[0].count, parts[1].count) : 0)
        } else if let first = parts[0].unicodeScalars.first, let last = parts[1].unicodeScalars.first,
            parts[0].unicodeScalars.count == 1, parts[1].unicodeScalars.count == 1,
            ("a"..."z").contains(first) && ("a"..."z").contains(last) || ("A"..."Z").contains(first) && ("A"..."Z").contains(last)
        {
            ends = (Int(first.value), Int(last.value), nil)
        } else {
            return nil
        }
        // Counted before it is made: a range of a million is refused without making it.
        guard abs(ends.last - ends.first) / step < maximumAlternatives else { return .tooMany }
        let values = stride(from: ends.first, through: ends.last, by: ends.first <= ends.last ? step : -step)
        guard let width = ends.width else { return .choices(values.compactMap { Unicode.Scalar($0).map(String.init) }) }
        return .choices(
            values.map { number in
                let sign = number < 0 ? "-" : "", digits = String(abs(number))
                return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
            })
    }
}

/// The patterns a pipeline file's `inputs` hold, for code outside the planner (`convert`).
package enum Glob {
    /// `path` as a pattern that names it and nothing else: each wildcard, brace and backslash
    /// behind a backslash.
    package static func literal(_ path: String) -> String {
        path.reduce(into: "") { pattern, character in
            if escaped.contains(character) { pattern.append("\\") }
            pattern.append(character)
        }
    }

    /// Whether `path` is a pattern, as the `inputs` take it: a part of it has a wildcard or an
    /// escape (`InputEnumerator.isGlob`), or it has a brace (a set, or a brace written as it is).
    package static func isPattern(_ path: String) -> Bool {
        path.contains("{") || path.split(separator: "/").contains { InputEnumerator.isGlob(String($0)) }
    }

    /// The characters a backslash before takes as they are: the wildcards, braces and the
    /// backslash itself.
    static let escaped: Set<Character> = ["*", "?", "[", "]", "{", "}", "\\"]
}
