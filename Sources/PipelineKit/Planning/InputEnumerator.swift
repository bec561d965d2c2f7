import Foundation

/// Expands the `inputs` of a pipeline file into files: literal paths as they are, globs by
/// walking the file system (`*`, `?`, `[abc]` within a name; `**` for any number of folders).
struct InputEnumerator {
    let baseDirectory: URL
    /// Lists `s3://` globs; nil where S3 is not available (then such an input is a problem).
    var s3: S3Access? = nil
    /// How URL inputs are named: with the credentials in them hidden.
    var redaction = CredentialRedaction()

    /// What enumeration found.
    struct Result {
        var files: [InputFile] = []
        var warnings: [String] = []
        /// List files that cannot be read, and lines in them that are not inputs.
        var problems: [PipelineFileError.Problem] = []
        /// Each entry that named no input, by its index in `inputs`: what it is and where it looked.
        var empty: [(index: Int, description: String)] = []
    }

    /// The inputs each entry names, in order; globs are sorted so runs are repeatable.
    /// A glob that matches nothing yields a warning rather than an error: a folder that is
    /// empty today may not be tomorrow.
    func enumerate(_ entries: [InputEntry]) -> Result {
        var result = Result()
        for (index, entry) in entries.enumerated() {
            let before = result.files.count
            // An entry that could not be read (a listing that failed) is reported as that
            // problem alone: "matches no files" would say the place was looked at and is empty.
            let problemsBefore = result.problems.count
            switch entry {
            case .pattern(let pattern):
                let folder = expand(pattern, at: "inputs[\(index)]", into: &result)
                if result.files.count == before, result.problems.count == problemsBefore {
                    result.empty.append((index, "\"\(pattern)\" matches no files in \(folder ?? baseDirectory.path)"))
                }
            case .list(let listPath):
                readList(listPath, at: "inputs[\(index)].list", into: &result)
                if result.files.count == before, result.problems.count == problemsBefore {
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
        guard !isURL(text), !S3Location.isS3(text), let range = text.range(of: "://") else { return nil }
        let scheme = text[..<range.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+.-".contains($0) }) else { return nil }
        return String(scheme)
    }

    private func absolute(_ path: String) -> String {
        Self.normalize(path.hasPrefix("/") ? path : baseDirectory.path + "/" + path)
    }

    private func readList(_ listPath: String, at place: String, into result: inout Result) {
        let absolute = absolute(listPath)
        guard let text = try? String(contentsOfFile: absolute, encoding: .utf8) else {
            result.problems.append(.init(path: place, location: nil, message: "cannot read the input list \(listPath)"))
            return
        }
        let listFolder = InputEnumerator(baseDirectory: URL(fileURLWithPath: absolute).deletingLastPathComponent(), s3: s3, redaction: redaction)
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if let scheme = Self.unsupportedScheme(line) {
                result.problems.append(.init(path: place, location: nil,
                    message: "\(listPath):\(number + 1): only http, https and s3 addresses are inputs, not \(scheme)"))
                continue
            }
            listFolder.expand(line, at: place, into: &result)
        }
    }

    /// Adds what `pattern` names; returns the folder a glob looked in.
    @discardableResult
    private func expand(_ pattern: String, at place: String, into result: inout Result) -> String? {
        if Self.isURL(pattern) {
            result.files.append(InputFile(url: pattern, redaction: redaction))
            return nil
        }
        if S3Location.isS3(pattern) {
            return expandS3(pattern, at: place, into: &result)
        }
        let absolute = pattern.hasPrefix("/") ? pattern : baseDirectory.path + "/" + pattern
        let components = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let firstGlob = components.firstIndex(where: Self.isGlob) else {
            let path = Self.normalize("/" + components.joined(separator: "/"))
            result.files.append(InputFile(path: path, displayName: displayName(path), subfolder: "", byteCount: Self.size(of: path)))
            return nil
        }
        let root = Self.normalize("/" + components[..<firstGlob].joined(separator: "/"))
        var matches: [String] = []
        walk(root, relative: "", pattern: components[firstGlob...], into: &matches)
        let sorted = Set(matches).sorted()
        if sorted.isEmpty { result.warnings.append("input \"\(pattern)\" matches no files in \(root)") }
        for relative in sorted {
            let folder = (relative as NSString).deletingLastPathComponent
            let path = root == "/" ? "/" + relative : root + "/" + relative
            result.files.append(InputFile(path: path, displayName: displayName(path), subfolder: folder, byteCount: Self.size(of: path)))
        }
        return root
    }

    /// Adds an `s3://` object, or the objects a glob matches: ListObjectsV2 with the key's
    /// literal part before its first wildcard as the prefix, then the glob matched on each key
    /// with the same rules as on the file system. Returns what it listed.
    private func expandS3(_ pattern: String, at place: String, into result: inout Result) -> String? {
        guard let location = S3Location(pattern) else {
            result.problems.append(.init(path: place, location: nil, message: "\"\(pattern)\" is not an s3://bucket/key address"))
            return nil
        }
        let parts = location.key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let firstGlob = parts.firstIndex(where: Self.isGlob) else {
            guard !location.key.isEmpty, !location.key.hasSuffix("/") else {
                result.problems.append(.init(path: place, location: nil, message:
                    "\(pattern) names a bucket or a folder, not an object: a glob such as \(pattern.hasSuffix("/") ? pattern : pattern + "/")**/*.jpg reads what is in it"))
                return nil
            }
            result.files.append(InputFile(s3: location))
            return nil
        }
        let folder = parts[..<firstGlob].joined(separator: "/")
        let folderPrefix = folder.isEmpty ? "" : folder + "/"
        let listPrefix = String(location.key.prefix { $0 != "*" && $0 != "?" && $0 != "[" })
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
        let glob = Array(parts[firstGlob...])
        var found = 0
        for object in objects.sorted(by: { $0.key < $1.key }) where object.key.hasPrefix(folderPrefix) {
            let relative = object.key.dropFirst(folderPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            // A key ending in "/" is a folder marker, not an image.
            guard relative.last?.isEmpty == false, Self.matches(glob[...], relative[...]) else { continue }
            result.files.append(InputFile(s3: S3Location(bucket: location.bucket, key: object.key),
                                          subfolder: relative.dropLast().joined(separator: "/"), etag: object.etag, byteCount: object.size))
            found += 1
        }
        if found == 0 { result.warnings.append("input \"\(pattern)\" matches no objects in \(listed)") }
        return listed
    }

    /// Whether a key's parts match a glob's parts: `**` stands for any number of parts (none
    /// starting with a dot, as the walk of folders skips hidden ones), any other part for one.
    static func matches(_ glob: ArraySlice<String>, _ parts: ArraySlice<String>) -> Bool {
        guard let first = glob.first else { return parts.isEmpty }
        if first == "**" {
            if matches(glob.dropFirst(), parts) { return true }
            guard let part = parts.first, !part.hasPrefix("."), parts.count > 1 else { return false }
            return matches(glob, parts.dropFirst())
        }
        guard let part = parts.first, !part.isEmpty,
              isGlob(first) ? matches(first, part) : first == part else { return false }
        return matches(glob.dropFirst(), parts.dropFirst())
    }

    private func walk(_ directory: String, relative: String, pattern: ArraySlice<String>, into matches: inout [String]) {
        guard let component = pattern.first else { return }
        let rest = pattern.dropFirst()
        let joined = { (name: String) in relative.isEmpty ? name : relative + "/" + name }
        let here = { (name: String) in directory == "/" ? "/" + name : directory + "/" + name }

        if component == "**" {
            // Zero folders: the rest of the pattern here; then every subfolder, recursively.
            // Symbolic links to folders are not followed, so a link cycle cannot loop forever.
            walk(directory, relative: relative, pattern: rest, into: &matches)
            for name in entries(of: directory) where !name.hasPrefix(".") && Self.kind(here(name), followLinks: false) == .directory {
                walk(here(name), relative: joined(name), pattern: pattern, into: &matches)
            }
            return
        }
        let candidates = Self.isGlob(component)
            ? entries(of: directory).filter { Self.matches(component, $0) }
            : [component]
        for name in candidates {
            let path = here(name)
            let kind = Self.kind(path, followLinks: true)
            if rest.isEmpty {
                if kind == .file { matches.append(joined(name)) }
            } else if kind == .directory {
                walk(path, relative: joined(name), pattern: rest, into: &matches)
            }
        }
    }

    private func entries(of directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    private func displayName(_ path: String) -> String {
        let base = baseDirectory.path.hasSuffix("/") ? baseDirectory.path : baseDirectory.path + "/"
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
    }

    private enum Kind { case file, directory, other }

    private static func size(of path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    private static func kind(_ path: String, followLinks: Bool) -> Kind {
        var info = stat()
        let status = followLinks ? stat(path, &info) : lstat(path, &info)
        guard status == 0 else { return .other }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    static func isGlob(_ component: String) -> Bool {
        component.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    /// Shell-style matching of one name; a leading dot must be matched explicitly.
    static func matches(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, FNM_PERIOD) == 0
    }

    /// Removes `.` and resolves `..` lexically, as the user wrote the path.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
