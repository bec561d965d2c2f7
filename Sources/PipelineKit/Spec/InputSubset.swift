import Foundation

/// The inputs an output is made for, when the pipeline file chooses them (an output's
/// `"inputs"`): globs with the rules of the top-level `inputs` (`*`, `?`, `[…]`, `**`, brace
/// sets), matched against the path of a local input relative to the pipeline file's folder (or
/// its absolute path, for a glob that is absolute or leaves the folder) and against the URL of
/// a remote one.
public struct InputSubset: Sendable, Equatable {
    /// The globs as the file writes them.
    public let patterns: [String]
    /// Each glob's brace sets expanded.
    let alternatives: [String]
    /// Where the file sets them, for the error when they match no input.
    var location: SourceLocation?

    /// The subset of the inputs `patterns` match; nil when their brace sets stand for too many globs.
    public init?(patterns: [String]) {
        var alternatives: [String] = []
        for pattern in patterns {
            guard let expanded = InputEnumerator.braceAlternatives(pattern) else { return nil }
            alternatives += expanded
        }
        self.patterns = patterns
        self.alternatives = alternatives
    }

    /// Whether `input` is one of the subset; `baseDirectory` is the pipeline file's folder.
    public func contains(_ input: InputFile, baseDirectory: URL, caseInsensitive: Bool) -> Bool {
        if let url = input.url {
            // A URL is matched whole: its "/" are no folders of this machine.
            return alternatives.contains { InputEnumerator.matches($0, url, caseInsensitive: caseInsensitive) }
        }
        return alternatives.contains { pattern in
            let leaves = pattern.hasPrefix("/") || pattern == ".." || pattern.hasPrefix("../")
            let glob = leaves ? Self.absolute(pattern, base: baseDirectory) : Self.relative(pattern)
            let name = leaves || input.displayName.hasPrefix("/") ? input.path : input.displayName
            return InputEnumerator.matches(Self.parts(glob)[...], Self.parts(name)[...], caseInsensitive: caseInsensitive)
        }
    }

    /// The parts of a path between its `/`, without the empty one before a leading `/`.
    private static func parts(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// A relative glob without its `./` parts.
    private static func relative(_ pattern: String) -> String {
        parts(pattern).filter { $0 != "." }.joined(separator: "/")
    }

    /// A glob that is absolute or leaves the folder, made absolute with its `..` and `.` resolved.
    private static func absolute(_ pattern: String, base: URL) -> String {
        var result: [String] = pattern.hasPrefix("/") ? [] : parts(base.standardizedFileURL.path)
        for part in parts(pattern) {
            switch part {
            case ".": continue
            case "..": if !result.isEmpty { result.removeLast() }
            default: result.append(part)
            }
        }
        return "/" + result.joined(separator: "/")
    }

    /// The error of each output (once, though `widths` or `formats` make it several) whose
    /// subset, among `unmatched`, matched none of the inputs.
    static func unmatchedProblems(_ unmatched: Set<Int>, of outputs: [OutputDefinition]) -> [PipelineFileError.Problem] {
        var reported: Set<Int> = []
        return unmatched.sorted().compactMap { index in
            let output = outputs[index]
            let fileIndex = output.fileIndex ?? index
            guard let subset = output.inputSubset, reported.insert(fileIndex).inserted else { return nil }
            let globs = subset.patterns.map(\.quotedValue).joined(separator: ", ")
            return .init(
                path: "outputs[\(fileIndex)].inputs", location: subset.location,
                message: "output \(output.name.quotedValue) is made for the inputs \(globs), but none of the file's inputs matches them")
        }
    }
}
