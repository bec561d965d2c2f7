import Foundation

/// Expands the `inputs` of a pipeline file into files: literal paths as they are, globs by
/// walking the file system (`*`, `?`, `[abc]` within a name; `**` for any number of folders;
/// brace sets `{jpg,png}`, nested as in `{a,b{c,d}}`, for each of their alternatives).
struct InputEnumerator {
    let baseDirectory: URL
    /// Lists `s3://` globs; nil where S3 is not available (then such an input is a problem).
    var s3: S3Access? = nil
    /// How URL inputs are named: with the credentials in them hidden.
    var redaction = CredentialRedaction()
    /// Whether globs match names whatever the case of their letters (`*.jpg` matches `A.JPG`).
    /// The folder before a glob's first wildcard is used as written: it is opened, not matched.
    var caseInsensitive = false

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

        init(sink: Sink) { self.sink = sink }

        /// Hands one input found to the sink.
        mutating func add(_ input: InputFile) {
            count += 1
            sink.add(input)
        }
    }

    /// The inputs each entry names, in order, each handed to `sink` as it is found; globs are
    /// sorted so runs are repeatable. A glob that matches nothing yields a warning rather than an
    /// error: a folder that is empty today may not be tomorrow.
    func enumerate<Sink: InputSink>(_ entries: [InputEntry], into sink: Sink) -> Result<Sink> {
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
        }
        return result
    }

    /// Whether `text` is an http or https URL (any other scheme is not an input).
    static func isURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// A scheme other than http(s), such as `ftp` or `file`, which inputs do not accept.
    static func unsupportedScheme(_ text: String) -> String? {
        guard !isURL(text), !ObjectStores.isObject(text), let range = text.range(of: "://") else { return nil }
        let scheme = text[..<range.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+.-".contains($0) }) else { return nil }
        return String(scheme)
    }

    private func absolute(_ path: String) -> String {
        Self.normalize(path.hasPrefix("/") ? path : baseDirectory.path + "/" + path)
    }

    private func readList(_ listPath: String, at place: String, into result: inout Result<some InputSink>) {
        let absolute = absolute(listPath)
        guard let text = try? String(contentsOfFile: absolute, encoding: .utf8) else {
            result.problems.append(.init(path: place, location: nil, message: "cannot read the input list \(listPath)"))
            return
        }
        result.listFiles.append(absolute)
        let listFolder = InputEnumerator(
            baseDirectory: URL(fileURLWithPath: absolute).deletingLastPathComponent(), s3: s3,
            redaction: redaction, caseInsensitive: caseInsensitive)
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if let scheme = Self.unsupportedScheme(line) {
                result.problems.append(
                    .init(
                        path: place, location: nil,
                        message: "\(listPath):\(number + 1): only http, https and s3 addresses are inputs, not \(scheme)"))
                continue
            }
            listFolder.expand(line, at: place, into: &result)
        }
    }

    /// Adds what `pattern` names; returns the folder a glob looked in, and what to add to
    /// "matches no files" when it matched none.
    @discardableResult
    private func expand(_ pattern: String, at place: String, into result: inout Result<some InputSink>) -> (folder: String?, hint: String) {
        if Self.isURL(pattern) {
            result.add(InputFile(url: pattern, redaction: redaction))
            return (nil, "")
        }
        if S3Location.isS3(pattern) {
            return (expandS3(pattern, at: place, into: &result), emptyHint(pattern, foldedMatches: 0))
        }
        let absolute = pattern.hasPrefix("/") ? pattern : baseDirectory.path + "/" + pattern
        guard let alternatives = Self.braceAlternatives(absolute) else {
            result.problems.append(.init(path: place, location: nil, message: Self.tooManyAlternatives(pattern)))
            return (nil, "")
        }
        let split = alternatives.map { $0.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }
        guard alternatives.count > 1 || split[0].contains(where: Self.isGlob) else {
            let path = Self.normalize("/" + split[0].joined(separator: "/"))
            result.add(InputFile(path: path, displayName: displayName(path), subfolder: "", byteCount: Self.size(of: path)))
            return (nil, "")
        }
        let rootCount = Self.rootCount(absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
        let found = files(matching: split, rootCount: rootCount)
        // Alternatives of a brace set may find one file twice. Told apart by bytes, as the disk
        // does: a Set of strings would take two names that differ only in how an accent is
        // encoded for one.
        var seen = Set<DiskPath>()
        let sorted = found.matches.filter { seen.insert(DiskPath($0)).inserted }.sorted()
        if !found.skipped.isEmpty {
            let named = found.skipped.keys.sorted().map { "\($0) (\(found.skipped[$0] ?? ""))" }
            result.warnings.append(
                "input \"\(pattern)\" skips \(named.count) \(named.count == 1 ? "entry that is" : "entries that are") "
                    + "not a regular file: \(named.joined(separator: ", "))")
        }
        var hint = ""
        if sorted.isEmpty {
            // The same walk ignoring case says whether case is what kept the files out.
            var folded = self
            folded.caseInsensitive = true
            hint = emptyHint(
                pattern, foldedMatches: caseInsensitive ? 0 : Set(folded.files(matching: split, rootCount: rootCount).matches).count)
            result.warnings.append("input " + Self.noMatchDescription(pattern, root: found.root, hint: hint))
        }
        for relative in sorted {
            let folder = (relative as NSString).deletingLastPathComponent
            let path = Self.path(relative, in: found.root)
            result.add(InputFile(path: path, displayName: displayName(path), subfolder: folder, byteCount: Self.size(of: path)))
        }
        return (found.root, hint)
    }

    /// The files the brace alternatives `split` (each a list of path components) match, relative
    /// to the root made of their first `rootCount` components, and the names matched that are no
    /// regular files.
    private func files(matching split: [[String]], rootCount: Int) -> (root: String, matches: [String], skipped: [String: String]) {
        let root = Self.normalize("/" + split[0][..<rootCount].joined(separator: "/"))
        var matches: [String] = []
        var skipped: [String: String] = [:]
        for components in split {
            walk(root, relative: "", pattern: components[rootCount...], into: &matches, skipped: &skipped)
        }
        return (root, matches, skipped)
    }

    /// How many leading components of a glob, as written (brace sets not expanded), come before
    /// its first wildcard or brace, and before its last component: the root, which every
    /// alternative of its brace sets shares, so `{dir}` is the same for one file whichever
    /// alternative found it (`photos/{a,a/b}/*.jpg` starts at `photos`, as fast-glob's base does).
    static func rootCount(_ components: [String]) -> Int {
        min(components.firstIndex { isGlob($0) || $0.contains("{") } ?? components.count, max(components.count - 1, 0))
    }

    private static func tooManyAlternatives(_ pattern: String) -> String {
        "\"\(pattern)\" has brace sets that make more than \(maximumAlternatives) patterns; split it into several inputs"
    }

    /// Adds an `s3://` object, or the objects a glob matches: ListObjectsV2 with the key's
    /// literal part before its first wildcard as the prefix, then the glob matched on each key
    /// with the same rules as on the file system. Returns what it listed.
    private func expandS3(_ pattern: String, at place: String, into result: inout Result<some InputSink>) -> String? {
        guard let location = S3Location(pattern) else {
            result.problems.append(.init(path: place, location: nil, message: "\"\(pattern)\" is not an s3://bucket/key address"))
            return nil
        }
        guard let alternatives = Self.braceAlternatives(location.key) else {
            result.problems.append(.init(path: place, location: nil, message: Self.tooManyAlternatives(pattern)))
            return nil
        }
        let split = alternatives.map { $0.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
        guard alternatives.count > 1 || split[0].contains(where: Self.isGlob) else {
            guard !location.key.isEmpty, !location.key.hasSuffix("/") else {
                result.problems.append(
                    .init(
                        path: place, location: nil,
                        message:
                            "\(pattern) names a bucket or a folder, not an object: a glob such as \(pattern.hasSuffix("/") ? pattern : pattern + "/")**/*.jpg reads what is in it"
                    ))
                return nil
            }
            result.add(InputFile(s3: location))
            return nil
        }
        let firstGlob = Self.rootCount(location.key.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
        let folder = split[0][..<firstGlob].joined(separator: "/")
        let folderPrefix = folder.isEmpty ? "" : folder + "/"
        let listPrefix = String(location.key.prefix { $0 != "*" && $0 != "?" && $0 != "[" && $0 != "{" })
        let listed = "s3://\(location.bucket)/\(listPrefix)"
        let objects: [S3Object]
        do {
            guard let s3 else { throw S3Configuration.Failure(message: "S3 is not available to this enumeration") }
            objects = try s3.client().list(bucket: location.bucket, prefix: listPrefix)
        } catch {
            let reason = (error as? ItemError)?.reason ?? (error as? S3Configuration.Failure)?.message ?? String(describing: error)
            result.problems.append(.init(path: place, location: nil, message: "cannot list \(pattern): \(reason)"))
            return listed
        }
        let globs = split.map { $0[firstGlob...] }
        var found = 0
        for object in objects.sorted(by: { $0.key < $1.key }) where object.key.hasPrefix(folderPrefix) {
            let relative = object.key.dropFirst(folderPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            // A key ending in "/" is a folder marker, not an image.
            guard relative.last?.isEmpty == false,
                globs.contains(where: { Self.matches($0, relative[...], caseInsensitive: caseInsensitive) })
            else { continue }
            result.add(
                InputFile(
                    s3: S3Location(bucket: location.bucket, key: object.key),
                    subfolder: relative.dropLast().joined(separator: "/"), etag: object.etag, byteCount: object.size))
            found += 1
        }
        if found == 0 {
            result.warnings.append("input \"\(pattern)\" matches no objects in \(listed)\(emptyHint(pattern, foldedMatches: 0))")
        }
        return listed
    }

    /// Whether a key's parts match a glob's parts: `**` stands for any number of parts (none
    /// starting with a dot, as the walk of folders skips hidden ones), any other part for one.
    static func matches(_ glob: ArraySlice<String>, _ parts: ArraySlice<String>, caseInsensitive: Bool = false) -> Bool {
        guard let first = glob.first else { return parts.isEmpty }
        if first == "**" {
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

    /// Adds the files below `directory` that `pattern` matches; names it matches that are not
    /// regular files nor folders (FIFOs, devices, sockets, dangling or looping links) go to `skipped`
    /// with what they are, for a warning: a glob that silently drops them looks like a lost input.
    private func walk(
        _ directory: String, relative: String, pattern: ArraySlice<String>, into matches: inout [String],
        skipped: inout [String: String]
    ) {
        guard let component = pattern.first else { return }
        let rest = pattern.dropFirst()
        let joined = { (name: String) in relative.isEmpty ? name : relative + "/" + name }
        let here = { (name: String) in directory == "/" ? "/" + name : directory + "/" + name }

        if component == "**" {
            // Zero folders: the rest of the pattern here; then every subfolder, recursively.
            // Symbolic links to folders are not followed, so a link cycle cannot loop forever.
            walk(directory, relative: relative, pattern: rest, into: &matches, skipped: &skipped)
            for name in entries(of: directory) where !name.hasPrefix(".") && Self.kind(here(name), followLinks: false) == .directory {
                walk(here(name), relative: joined(name), pattern: pattern, into: &matches, skipped: &skipped)
            }
            return
        }
        let candidates =
            Self.isGlob(component) || caseInsensitive
            ? entries(of: directory).filter { Self.nameMatches(component, $0, caseInsensitive: caseInsensitive) }
            : [component]
        for name in candidates {
            let path = here(name)
            let kind = Self.kind(path, followLinks: true)
            if rest.isEmpty {
                switch kind {
                case .file: matches.append(joined(name))
                case .directory, .absent: break
                case .other(let what):
                    // A link is named with where it leads: the device is not the input's name.
                    let target = what.contains("symbolic link") ? nil : FileFetcher.linkTarget(path)
                    skipped[path] = target.map { "a symbolic link to \($0), \(what)" } ?? what
                }
            } else if kind == .directory {
                walk(path, relative: joined(name), pattern: rest, into: &matches, skipped: &skipped)
            }
        }
    }

    private func entries(of directory: String) -> [String] {
        LongPath.entries(of: directory).sorted()
    }

    /// The path relative to the pipeline file's folder when inside it; one too long to open,
    /// which the plan refuses, shortened in the middle.
    private func displayName(_ path: String) -> String {
        let base = baseDirectory.path.hasSuffix("/") ? baseDirectory.path : baseDirectory.path + "/"
        let name = path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
        return LongPath.isTooLong(path) ? LongPath.displayed(name) : name
    }

    private enum Kind: Equatable {
        case file, directory
        /// Nothing by that name.
        case absent
        /// Something a run cannot read as an image file, and what it is.
        case other(String)
    }

    private static func size(of path: String) -> Int64? {
        var info = stat()
        return LongPath.status(of: path, &info, followLinks: true) == 0 ? Int64(info.st_size) : nil
    }

    private static func kind(_ path: String, followLinks: Bool) -> Kind {
        var info = stat()
        guard LongPath.status(of: path, &info, followLinks: followLinks) == 0 else {
            let failure = errno
            var link = stat()
            guard followLinks, LongPath.status(of: path, &link, followLinks: false) == 0 else { return .absent }
            return .other(failure == ELOOP ? "a loop of symbolic links" : "a symbolic link to nothing")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        case S_IFIFO: return .other("a FIFO")
        case S_IFCHR: return .other("a character device")
        case S_IFBLK: return .other("a block device")
        case S_IFSOCK: return .other("a socket")
        default: return .other("not a regular file")
        }
    }

    /// What to add to "matches no files" when the pattern may have meant more: `foldedMatches`
    /// files match it ignoring case, or it lists choices in a way globs do not (`*.jpg,png`,
    /// `*.(jpg|png)`) where a brace set would.
    private func emptyHint(_ pattern: String, foldedMatches: Int) -> String {
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
