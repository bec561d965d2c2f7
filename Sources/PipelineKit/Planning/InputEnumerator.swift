import Foundation

/// Expands the `inputs` of a pipeline file into files: literal paths as they are, globs by
/// walking the file system (`*`, `?`, `[abc]` within a name; `**` for any number of folders;
/// brace sets `{jpg,png}`, nested as in `{a,b{c,d}}`, for each of their alternatives).
struct InputEnumerator {
    let baseDirectory: URL
    /// The run's object stores, which list their globs; nil where none is available (then such an
    /// input is a problem).
    var stores: ObjectStoreAccess? = nil
    /// How URL inputs are named: with the credentials in them hidden.
    var redaction = CredentialRedaction()
    /// Whether globs match names whatever the case of their letters (`*.jpg` matches `A.JPG`).
    /// The folder before a glob's first wildcard is used as written: it is opened, not matched.
    var caseInsensitive = false
    /// The folder inputs are named relative to (the pipeline file's), where it is not
    /// `baseDirectory`: a list file's lines are found from the list's own folder.
    var namesFrom: URL? = nil

    /// Where a listing looked (a glob's folder, a store's prefix), and what to add to "matches no
    /// files" when it found nothing.
    typealias Looked = (folder: String?, hint: String)

    /// What enumeration found: each input handed to `sink` as it is found, and what it has to say.
    struct Result<Sink: InputSink> {
        var sink: Sink
        /// How many inputs were handed to `sink`.
        private(set) var count = 0
        var warnings: [String] = []
        /// List files that cannot be read, and lines in them that are not inputs.
        var problems: [PipelineFileError.Problem] = []
        /// Each entry that named no input, by its index in `inputs`: what it is and where it looked.
        var empty: [(index: Int, description: String)] = []
        /// The list files read, absolute: the run must not write over them.
        var listFiles: [String] = []
        /// The folders globs entered through symbolic links, where the run must not write what
        /// they match.
        var linkedFolders: [InputReach.LinkedFolder] = []

        init(sink: Sink) { self.sink = sink }

        /// Hands one input found to the sink.
        mutating func add(_ input: InputFile) {
            count += 1
            sink.add(input)
        }
    }

    /// The inputs each entry names, in order, each handed to `sink` as it is found; globs are
    /// sorted so runs are repeatable. A glob that matches nothing yields a warning rather than an
    /// error: a folder that is empty today may not be tomorrow. A problem an entry's listing finds
    /// (a list file's line) is placed at the entry, by `location`.
    func enumerate<Sink: InputSink>(
        _ entries: [InputEntry], into sink: Sink, locatedBy location: (Int) -> SourceLocation? = { _ in nil }
    ) -> Result<Sink> {
        var result = Result(sink: sink)
        for (index, entry) in entries.enumerated() {
            let before = result.count
            // An entry that could not be read (a listing that failed) is reported as that
            // problem alone: "matches no files" would say the place was looked at and is empty.
            let problemsBefore = result.problems.count
            switch entry {
            case .pattern(let pattern):
                let looked = expand(pattern, at: "inputs[\(index)]", into: &result)
                if result.count == before, result.problems.count == problemsBefore {
                    result.empty.append(
                        (index, Self.noMatchDescription(pattern, root: looked.folder ?? baseDirectory.path, hint: looked.hint)))
                }
            case .list(let listPath):
                readList(listPath, at: "inputs[\(index)].list", into: &result)
                if result.count == before, result.problems.count == problemsBefore {
                    result.empty.append((index, "the list \"\(listPath)\" (\(absolute(listPath))) names no inputs"))
                }
            }
            for found in problemsBefore..<result.problems.count where result.problems[found].location == nil {
                let problem = result.problems[found]
                result.problems[found] = .init(path: problem.path, location: location(index), message: problem.message)
            }
        }
        return result
    }

    private func absolute(_ path: String) -> String {
        Self.normalize(path.hasPrefix("/") ? path : baseDirectory.path + "/" + path)
    }

    /// The longest line of a list file read as an input: far more than a path may have
    /// (`PATH_MAX`) or a signed URL needs.
    static let longestListedInput = 65_536

    private func readList(_ listPath: String, at place: String, into result: inout Result<some InputSink>) {
        let absolute = absolute(listPath)
        let data: Data
        do throws(RegularFile.Failure) {
            data = try RegularFile.contents(of: absolute)
        } catch {
            result.problems.append(.init(path: place, location: nil, message: "cannot read the input list \(listPath): \(error.reason)"))
            return
        }
        guard let text = String(data: data, encoding: .utf8) else {
            result.problems.append(
                .init(path: place, location: nil, message: "cannot read the input list \(listPath): it is not UTF-8 text"))
            return
        }
        result.listFiles.append(absolute)
        let listFolder = InputEnumerator(
            baseDirectory: URL(fileURLWithPath: absolute).deletingLastPathComponent(), stores: stores,
            redaction: redaction, caseInsensitive: caseInsensitive, namesFrom: namesFrom ?? baseDirectory)
        // By Character, "\r\n" is one, which a split on "\n" would never meet: a list saved on Windows.
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            // Refused before the many passes a path or address takes, each costly at this length.
            if line.utf8.count > Self.longestListedInput {
                result.problems.append(
                    .init(
                        path: place, location: nil,
                        message: "\(listPath):\(number + 1): the line is \(line.utf8.count) bytes long, more than the "
                            + "\(Self.longestListedInput) an input's path or address may have here: is the file a list of inputs?"))
                continue
            }
            if let scheme = InputSources.unsupportedScheme(line) {
                result.problems.append(
                    .init(
                        path: place, location: nil,
                        message: "\(listPath):\(number + 1): only http, https and s3 addresses are inputs, not \(scheme)"))
                continue
            }
            // What the line's listing finds to say is said at the line.
            let (problems, warnings) = (result.problems.count, result.warnings.count)
            listFolder.expand(line, at: place, into: &result)
            let prefix = "\(listPath):\(number + 1): "
            for found in problems..<result.problems.count {
                let problem = result.problems[found]
                result.problems[found] = .init(path: problem.path, location: problem.location, message: prefix + problem.message)
            }
            for found in warnings..<result.warnings.count { result.warnings[found] = prefix + result.warnings[found] }
        }
    }

    /// Adds what `pattern` names, through the source that reads it; returns the folder a glob
    /// looked in, and what to add to "matches no files" when it matched none.
    @discardableResult
    private func expand(_ pattern: String, at place: String, into result: inout Result<some InputSink>) -> Looked {
        InputSources.source(of: pattern).list(pattern, at: place, by: self, into: &result)
    }

    /// How many leading components of a glob, as written (brace sets not expanded), come before
    /// its first wildcard or brace, and before its last component: the root, which every
    /// alternative of its brace sets shares, so `{dir}` is the same for one file whichever
    /// alternative found it (`photos/{a,a/b}/*.jpg` starts at `photos`, as fast-glob's base does).
    static func rootCount(_ components: [String]) -> Int {
        min(components.firstIndex { isGlob($0) || $0.contains("{") } ?? components.count, max(components.count - 1, 0))
    }

    static func tooManyAlternatives(_ pattern: String) -> String {
        "\"\(pattern)\" has brace sets that make more than \(maximumAlternatives) patterns; split it into several inputs"
    }

    /// Whether a key's parts match a glob's parts: `**` stands for any number of parts (none
    /// starting with a dot, as the walk of folders skips hidden ones), any other part for one.
    /// A `**` that ends the glob takes every file below, as `**/*` does (`photos/**`).
    static func matches(_ glob: ArraySlice<String>, _ parts: ArraySlice<String>, caseInsensitive: Bool = false) -> Bool {
        guard let first = glob.first else { return parts.isEmpty }
        if first == "**" {
            if glob.count == 1 { return matches(["**", "*"], parts, caseInsensitive: caseInsensitive) }
            if matches(glob.dropFirst(), parts, caseInsensitive: caseInsensitive) { return true }
            guard let part = parts.first, !part.hasPrefix("."), parts.count > 1 else { return false }
            return matches(glob, parts.dropFirst(), caseInsensitive: caseInsensitive)
        }
        guard let part = parts.first, !part.isEmpty, nameMatches(first, part, caseInsensitive: caseInsensitive) else { return false }
        return matches(glob.dropFirst(), parts.dropFirst(), caseInsensitive: caseInsensitive)
    }

    /// Whether one glob component matches one name: a literal one, as written unless case is ignored.
    static func nameMatches(_ component: String, _ name: String, caseInsensitive: Bool) -> Bool {
        if isGlob(component) || caseInsensitive {
            return matches(component, name, caseInsensitive: caseInsensitive)
        }
        return component == name
    }

    /// What to add to "matches no files" when the pattern may have meant more: `foldedMatches`
    /// files match it ignoring case, or it lists choices in a way globs do not (`*.jpg,png`,
    /// `*.(jpg|png)`) where a brace set would.
    func emptyHint(_ pattern: String, foldedMatches: Int) -> String {
        var hints: [String] = []
        if foldedMatches > 0 {
            hints.append(
                "\(foldedMatches) \(foldedMatches == 1 ? "file matches" : "files match") it ignoring case (\"caseInsensitive\": true)")
        }
        if (Self.braceAlternatives(pattern)?.count ?? 2) == 1, pattern.contains(where: { ",|(".contains($0) }) {
            hints.append("several choices are a brace set, as in \"photos/**/*.{jpg,png}\"")
        }
        return hints.isEmpty ? "" : "; " + hints.joined(separator: "; ")
    }
}

/// What takes the inputs an enumeration finds, one at a time: the planner, or a list.
protocol InputSink {
    mutating func add(_ input: InputFile)
}

extension Array: InputSink where Element == InputFile {
    mutating func add(_ input: InputFile) { append(input) }
}
