import Foundation

/// Local files' listing: a path names one file, a glob the files a walk of the folders finds.
extension InputEnumerator {
    /// Adds the file `pattern` names, or the files it matches; returns the folder a glob walked
    /// from, and what to add to "matches no files" when it matched none.
    func listLocal(_ pattern: String, at place: String, into result: inout Result<some InputSink>) -> Looked {
        let absolute = pattern.hasPrefix("/") ? pattern : baseDirectory.path + "/" + pattern
        guard let alternatives = Self.braceAlternatives(absolute) else {
            result.problems.append(.init(path: place, location: nil, message: Self.tooManyAlternatives(pattern)))
            return (nil, "")
        }
        let split = alternatives.map { $0.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }
        guard alternatives.count > 1 || split[0].contains(where: Self.isGlob) else {
            let path = Self.normalize("/" + split[0].joined(separator: "/"))
            let byteCount = Self.size(of: path)
            // Still an input, which fails at fetch: the run says what became of every one named.
            switch Self.kind(path, followLinks: true) {
            case .file: break
            case .absent:
                result.warnings.append("input \"\(pattern)\": there is no file \(displayName(path)); it will fail when fetched")
            case .directory:
                let folder = Glob.literal(pattern.hasSuffix("/") ? String(pattern.dropLast()) : pattern)
                result.warnings.append(
                    "input \"\(pattern)\": \(displayName(path)) is a folder, not a file; it will fail when fetched. "
                        + "For the files in it, give a glob: \"\(folder)/**\" (every file below) or \"\(folder)/*.jpg\"")
            case .other(let what):
                result.warnings.append(
                    "input \"\(pattern)\": \(displayName(path)) is \(what), not a regular file; it will fail when fetched")
            }
            result.add(InputFile(path: path, displayName: displayName(path), subfolder: "", byteCount: byteCount))
            return (nil, "")
        }
        let rootCount = Self.rootCount(absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
        let found = files(matching: split, rootCount: rootCount)
        result.linkedFolders += found.linked.map {
            InputReach.LinkedFolder(place: place, pattern: pattern, root: $0.root, components: $0.components)
        }
        // Alternatives of a brace set may find one file twice. Told apart by bytes, as the disk
        // does: a Set of strings would take two names that differ only in how an accent is
        // encoded for one.
        var seen = Set<DiskPath>()
        let sorted = found.matches.filter { seen.insert(DiskPath($0)).inserted }.sorted()
        if !found.skipped.isEmpty {
            let named = found.skipped.keys.sorted().map { "\($0) (\(found.skipped[$0] ?? ""))" }
            result.warnings.append(
                "input \"\(pattern)\" skips \(named.count) \(named.count == 1 ? "entry" : "entries") it cannot take as an input: "
                    + named.joined(separator: ", "))
        }
        var hint = ""
        if sorted.isEmpty {
            // The same walk ignoring case says whether case is what kept the files out.
            var folded = self
            folded.caseInsensitive = true
            hint = emptyHint(
                pattern, foldedMatches: caseInsensitive ? 0 : Set(folded.files(matching: split, rootCount: rootCount).matches).count)
            // `photo [1].jpg`: a name with a wildcard in it is a pattern, which names another file.
            // Said in words: a pattern shown would have its backslashes doubled on the terminal.
            if case .file = Self.kind(absolute, followLinks: true) {
                hint +=
                    "; a file of exactly this name exists: put a backslash before each [, *, ?, { and } in it to name it "
                    + "(in a pipeline file, a backslash is written twice)"
            }
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
    /// to the root made of their first `rootCount` components; the names matched that are no
    /// input, with what they are; and the folders the walk entered through a symbolic link.
    private func files(matching split: [[String]], rootCount: Int) -> (
        root: String, matches: [String], skipped: [String: String], linked: [LinkedWalk]
    ) {
        let root = Self.normalize("/" + split[0][..<rootCount].joined(separator: "/"))
        var matches: [String] = []
        var skipped: [String: String] = [:]
        var linked: [LinkedWalk] = []
        for components in split {
            walk(root, relative: "", pattern: components[rootCount...], into: &matches, skipped: &skipped, linked: &linked)
        }
        return (root, matches, skipped, linked)
    }

    /// A folder a glob's walk entered through a symbolic link: where the link leads, and the
    /// components of the glob left to match there.
    private typealias LinkedWalk = (root: String, components: [String])

    /// Adds the files below `directory` that `pattern` matches; names it matches that are no
    /// input (FIFOs, devices, sockets, dangling or looping links, folders, names that are not
    /// UTF-8) go to `skipped` with what they are, for a warning: a glob that silently drops them
    /// looks like a lost input. Folders entered through a symbolic link go to `linked`: a file
    /// written where the link leads is an input of the next walk.
    private func walk(
        _ directory: String, relative: String, pattern: ArraySlice<String>, into matches: inout [String],
        skipped: inout [String: String], linked: inout [LinkedWalk]
    ) {
        guard let component = pattern.first else { return }
        let rest = pattern.dropFirst()
        let joined = { (name: String) in relative.isEmpty ? name : relative + "/" + name }
        let here = { (name: String) in directory == "/" ? "/" + name : directory + "/" + name }

        if component == "**" {
            // A `**` that ends the pattern takes every file below, as `**/*` does.
            if rest.isEmpty {
                return walk(directory, relative: relative, pattern: ["**", "*"], into: &matches, skipped: &skipped, linked: &linked)
            }
            // Zero folders: the rest of the pattern here; then every subfolder, recursively.
            // Symbolic links to folders are not followed, so a link cycle cannot loop forever.
            walk(directory, relative: relative, pattern: rest, into: &matches, skipped: &skipped, linked: &linked)
            let listing = LongPath.listing(of: directory)
            if let unreadable = listing.unreadable { skipped[directory] = unreadable }
            for name in listing.names.sorted() where !name.hasPrefix(".") {
                let own = Self.kind(here(name), followLinks: false)
                if own == .directory {
                    walk(here(name), relative: joined(name), pattern: pattern, into: &matches, skipped: &skipped, linked: &linked)
                } else if own != .file, Self.kind(here(name), followLinks: true) == .directory {
                    // Left out, where a `*` in its place goes through it: said, so that the photos
                    // there are not taken for lost.
                    skipped[here(name)] =
                        "a symbolic link to a folder, which ** does not follow (a link may lead back up the tree): "
                        + "give a glob of the folder it leads to"
                }
            }
            for name in listing.undecodable where name.isFolder && !name.replaced.hasPrefix(".") {
                skipped[here(name.replaced)] = Self.undecodable(name)
            }
            return
        }
        let listing = Self.isGlob(component) || caseInsensitive ? LongPath.listing(of: directory) : nil
        if let unreadable = listing?.unreadable { skipped[directory] = unreadable }
        let candidates =
            listing.map { $0.names.sorted().filter { Self.nameMatches(component, $0, caseInsensitive: caseInsensitive) } } ?? [component]
        for name in listing?.undecodable ?? []
        where (rest.isEmpty || name.isFolder) && Self.nameMatches(component, name.replaced, caseInsensitive: caseInsensitive) {
            skipped[here(name.replaced)] = Self.undecodable(name)
        }
        for name in candidates {
            let path = here(name)
            let kind = Self.kind(path, followLinks: true)
            if rest.isEmpty {
                switch kind {
                case .file: matches.append(joined(name))
                case .absent: break
                // `*` is asked to take every name, folders among them; a folder whose name fits a
                // narrower pattern (`x.jpg` for `*.jpg`) looks like an input, so it is named.
                case .directory where component == "*": break
                case .directory: skipped[path] = "a folder"
                case .other(let what):
                    // A link is named with where it leads: the device is not the input's name.
                    let target = what.contains("symbolic link") ? nil : FileFetcher.linkTarget(path)
                    skipped[path] = target.map { "a symbolic link to \($0), \(what)" } ?? what
                }
            } else if kind == .directory {
                if Self.kind(path, followLinks: false) != .directory, let real = WriteCheck.realPath(path) {
                    linked.append((real, Array(rest)))
                }
                walk(path, relative: joined(name), pattern: rest, into: &matches, skipped: &skipped, linked: &linked)
            }
        }
    }

    /// Why a name that is not UTF-8 is skipped.
    private static func undecodable(_ name: LongPath.UndecodableName) -> String {
        (name.isFolder ? "a folder" : "a file") + " whose name is not UTF-8 where \u{FFFD} stands, "
            + "which a pipeline cannot name; rename it"
    }

    /// The path relative to the pipeline file's folder when inside it; one too long to open,
    /// which the plan refuses, shortened in the middle.
    private func displayName(_ path: String) -> String {
        let folder = (namesFrom ?? baseDirectory).path
        let base = folder.hasSuffix("/") ? folder : folder + "/"
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
            // A folder on the way that may not be searched hides what is in it.
            if let unreachable = InputFile.unreachable(at: path) { return .other("a path that " + unreachable) }
            guard followLinks, let link = InputFile.brokenLink(at: path) else { return .absent }
            return .other(link)
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
}

extension InputFile {
    /// What is at `path` when it is a symbolic link that leads to no file ("a loop of symbolic
    /// links", "a symbolic link to nothing"); nil for anything else, or nothing.
    package static func brokenLink(at path: String) -> String? {
        var info = stat()
        guard LongPath.status(of: path, &info, followLinks: true) != 0 else { return nil }
        let failure = errno
        guard LongPath.status(of: path, &info, followLinks: false) == 0 else { return nil }
        return failure == ELOOP ? "a loop of symbolic links" : "a symbolic link to nothing"
    }

    /// Why `path` cannot be reached when a folder on the way may not be searched ("cannot be
    /// reached: Permission denied"); nil for anything else.
    package static func unreachable(at path: String) -> String? {
        var info = stat()
        guard LongPath.status(of: path, &info, followLinks: false) != 0 else { return nil }
        let failure = errno
        return failure == EACCES || failure == EPERM ? "cannot be reached: \(String(cString: strerror(failure)))" : nil
    }
}
