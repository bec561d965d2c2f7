import Foundation

/// What a watcher of one pipeline cares about: the files that can change a run's result (inputs
/// its globs can match, list files, the pipeline file, the focus file, the images its steps load) and the
/// folders to watch to see them. A run's own writes (outputs, temporary files, the cache and its
/// journal) are never changes, so a run cannot set off the next one.
struct WatchScope: Sendable {
    /// One thing whose changes matter.
    enum Target: Sendable, Hashable {
        /// An exact file: the pipeline file, a list file, an overlay, an input named in full.
        case file(String)
        /// Files a glob can match: the folder before its first wildcard, then the components
        /// left (`**` for any number of folders).
        case glob(root: String, components: [String])
    }

    private(set) var targets: [Target]
    /// The list files among the targets: when one changes, the scope is made again.
    let listFiles: Set<String>
    /// The files a glob matches now that are symbolic links: the files they name are targets
    /// too, and when one of them comes or goes, the scope is made again.
    private(set) var linkedInputs: Set<String> = []
    /// The shapes of the files outputs write, and of the folders tile pyramids write whole.
    let outputShapes: (files: [OutputPathShape], folders: [OutputPathShape])
    let cacheDirectory: String
    /// Whether glob components match names whatever their case, as the pipeline's `caseInsensitive`.
    var caseInsensitive = false

    /// The scope of `definition`, read from `pipelineFile`. Remote inputs and overlays are not
    /// watched: no folder holds them. Entries of list files are read now; the list file itself is
    /// watched, and a new scope is made when one of them or the pipeline changes.
    init(definition: PipelineDefinition, pipelineFile: String) {
        let inputs = Self.inputPatterns(of: definition)
        var files = [InputEnumerator.normalize(pipelineFile)] + inputs.listFiles
        files += definition.filesOutputsAreMadeWith.map(InputEnumerator.normalize)
        if let fallback = definition.serve.fallback { files.append(InputEnumerator.normalize(fallback.file.path)) }
        var targets = files.flatMap(Self.linkedPaths).map(Target.file)
        for target in inputs.patterns.flatMap(\.targets) {
            if case .file(let file) = target { targets += Self.linkedPaths(file).map(Target.file) } else { targets.append(target) }
        }
        var seen: Set<Target> = []
        self.targets = targets.filter { seen.insert($0).inserted }
        listFiles = Set(inputs.listFiles)
        outputShapes = Self.shapes(of: definition.outputs, base: definition.baseDirectory)
        cacheDirectory = InputEnumerator.normalize(definition.cache.directory.path)
        caseInsensitive = definition.caseInsensitive
        // A photo linked into an input folder is edited where the link points: that file, and
        // any folder link on the way, are watched as a linked pipeline file is.
        var links: [String]? = []
        var folders: Set<String> = []
        for case .glob(let root, let components) in self.targets where Self.isDirectory(root, followLinks: true) {
            walk(root, components[...], into: &folders, links: &links)
        }
        linkedInputs = Set(links ?? [])
        let linked = linkedInputs.sorted().flatMap { Self.linkedPaths($0).dropFirst() }.map(Target.file)
        self.targets += linked.filter { seen.insert($0).inserted }
    }

    /// Adds `files`, absolute, to the targets, with the paths a change to each may come through.
    mutating func add(files: [String]) {
        var seen = Set(targets)
        targets += files.flatMap(Self.linkedPaths).map(Target.file).filter { seen.insert($0).inserted }
    }

    /// One pattern among a file's inputs: an entry of `inputs`, or a line of a list file there.
    struct InputPattern {
        /// Where the file sets it (`inputs[2]`, `inputs[3].list`), with the entry's line and column.
        let place: String
        let location: SourceLocation?
        let pattern: String
        /// What it names: its files, or its globs' folders and components.
        let targets: [Target]
    }

    /// The patterns among `definition`'s inputs with their targets, in order, the lines of its
    /// list files read now; and the list files, absolute.
    static func inputPatterns(of definition: PipelineDefinition) -> (patterns: [InputPattern], listFiles: [String]) {
        let base = definition.baseDirectory.path
        var patterns: [InputPattern] = []
        var lists: [String] = []
        for (index, entry) in definition.inputs.enumerated() {
            let location = definition.inputLocation(index)
            switch entry {
            case .pattern(let pattern):
                patterns.append(
                    InputPattern(place: "inputs[\(index)]", location: location, pattern: pattern, targets: targets(pattern, base: base)))
            case .list(let list):
                let path = absolute(list, base: base)
                lists.append(path)
                let folder = (path as NSString).deletingLastPathComponent
                let text = (try? RegularFile.contents(of: path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                for line in text.split(separator: "\n") {
                    let entry = line.trimmingCharacters(in: .whitespacesAndNewlines)
                    if entry.isEmpty || entry.hasPrefix("#") { continue }
                    // A URL names nothing on disk: a list of thousands keeps none of them. An
                    // `s3://` glob is kept, with no target: each run lists its bucket again.
                    let found = targets(entry, base: folder)
                    if found.isEmpty, S3KeyGlob(pattern: entry, caseInsensitive: definition.caseInsensitive) == nil { continue }
                    patterns.append(InputPattern(place: "inputs[\(index)].list", location: location, pattern: entry, targets: found))
                }
            }
        }
        return (patterns, lists)
    }

    /// `file`, and what a change to it may come through when it is a symbolic link: the file
    /// each link names, whose edit in place changes nothing in the link's folder, and any folder
    /// link on the way there that a link brought in (Kubernetes' `..data` in a mounted ConfigMap,
    /// which an update renames a new link over). Bounded as the kernel bounds a chain of links.
    static func linkedPaths(_ file: String) -> [String] {
        var paths = [file]
        var current = file
        for _ in 0..<40 {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { break }
            let folder = (current as NSString).deletingLastPathComponent
            let named = InputEnumerator.normalize(destination.hasPrefix("/") ? destination : folder + "/" + destination)
            var ancestor = (named as NSString).deletingLastPathComponent
            while ancestor.count > 1, folder != ancestor, !folder.hasPrefix(ancestor + "/") {
                if (try? FileManager.default.destinationOfSymbolicLink(atPath: ancestor)) != nil { paths.append(ancestor) }
                ancestor = (ancestor as NSString).deletingLastPathComponent
            }
            let realFolder = URL(fileURLWithPath: (named as NSString).deletingLastPathComponent).resolvingSymlinksInPath().path
            current = realFolder + "/" + (named as NSString).lastPathComponent
            paths.append(current)
        }
        return paths
    }

    // MARK: Which changes matter

    /// Whether a change to the file at `path` matters: something a target names, and nothing a
    /// run writes. A file named in full (the pipeline file, a list, an overlay, a profile, an
    /// input) always matters, whatever output path it looks like: a plan refuses to write what
    /// its run reads.
    func isRelevant(file path: String) -> Bool {
        if targets.contains(.file(path)) { return true }
        return !isWrittenByRuns(path) && targets.contains { Self.matches($0, path, caseInsensitive: caseInsensitive) }
    }

    /// Whether a run writes the file, or the folder, at `path`: an output (a tile pyramid's
    /// folder, and all in it), a temporary file, anything in the cache folder.
    func isWrittenByRuns(_ path: String, isFolder: Bool = false) -> Bool {
        if (path as NSString).lastPathComponent.contains(ImageWriter.temporaryMarker) { return true }
        if path == cacheDirectory || path.hasPrefix(cacheDirectory + "/") { return true }
        return outputShapes.files.contains { $0.matches(path) }
            || outputShapes.folders.contains { $0.matches(path, inside: true) || (isFolder && $0.matches(path)) }
    }

    /// Whether a folder at `path` may hold a target (it lies on the way to one, or inside a glob's
    /// folder): its removal may remove inputs, its arrival may bring some.
    func mayHoldTargets(directory path: String) -> Bool {
        let prefix = path == "/" ? "/" : path + "/"
        return !isWrittenByRuns(path, isFolder: true)
            && targets.contains { target in
                switch target {
                case .file(let file): file.hasPrefix(prefix)
                case .glob(let root, _): root == path || root.hasPrefix(prefix) || path.hasPrefix(root == "/" ? "/" : root + "/")
                }
            }
    }

    /// Whether a change at `path`, a file or a folder (gone, perhaps), may change what the targets
    /// name: a folder counts when it may hold a target.
    func mayChangeTargets(at path: String) -> Bool {
        if isRelevant(file: path) { return true }
        var status = stat()
        let isFile = lstat(path, &status) == 0 && !Self.isDirectory(path, followLinks: true)
        return !isFile && mayHoldTargets(directory: path)
    }

    /// Whether the folder at `path`, new to the watcher, holds a file that matters.
    func holdsRelevantFiles(directory path: String) -> Bool {
        // A folder that came as a symbolic link is walked where it points, its files named through it.
        let real = Self.isSymbolicLink(path) ? URL(fileURLWithPath: path).resolvingSymlinksInPath().path : path
        guard mayHoldTargets(directory: path), let walker = FileManager.default.enumerator(atPath: real) else { return false }
        while let relative = walker.nextObject() as? String {
            if isRelevant(file: path + "/" + relative) { return true }
        }
        return false
    }

    // MARK: Which folders to watch

    /// Every folder whose entries the targets depend on, as the file system is now. A folder that
    /// does not exist yet is stood in for by its nearest existing ancestor, so its arrival is seen.
    func directoriesToWatch() -> Set<String> {
        var folders: Set<String> = []
        for target in targets {
            switch target {
            case .file(let path):
                let folder = (path as NSString).deletingLastPathComponent
                folders.insert(Self.nearestExisting(folder))
                // The folder holding it sees it renamed away, or another renamed into its place.
                if folder != "/" { folders.insert(Self.nearestExisting((folder as NSString).deletingLastPathComponent)) }
            case .glob(let root, let components):
                let existing = Self.nearestExisting(root)
                if existing != root {
                    folders.insert(existing)
                    // A link on the way that names no folder now (its release deleted, or not
                    // made yet): where that folder would be is watched for it to come.
                    folders.formUnion(Self.danglingLinks(above: root).map(Self.nearestExisting))
                } else {
                    var noLinks: [String]?
                    walk(root, components[...], into: &folders, links: &noLinks)
                    // The folder holding it sees it renamed away, or another renamed into its place.
                    if root != "/" { folders.insert(Self.nearestExisting((root as NSString).deletingLastPathComponent)) }
                }
            }
        }
        return folders
    }

    /// Adds `directory` and the folders below it that `components` can still lead through; and,
    /// when `links` is given, the files there the last component matches that are symbolic links.
    private func walk(_ directory: String, _ components: ArraySlice<String>, into folders: inout Set<String>, links: inout [String]?) {
        // A glob's folders are watched, not the cache. No cycle is possible: `**` follows no
        // symbolic link, and every other component goes one level down.
        guard !isWrittenByRuns(directory, isFolder: true) else { return }
        folders.insert(directory)
        guard let first = components.first else { return }
        let here = { (name: String) in directory == "/" ? "/" + name : directory + "/" + name }
        guard components.count > 1 else {
            guard links != nil else { return }
            for name in matching(first, in: directory) where Self.isSymbolicLink(here(name)) && !isWrittenByRuns(here(name)) {
                links?.append(here(name))
            }
            return
        }
        if first == "**" {
            // Any depth, not through hidden folders or symbolic links, as the enumerator walks.
            walk(directory, components.dropFirst(), into: &folders, links: &links)
            for name in Self.entries(of: directory) where !name.hasPrefix(".") && Self.isDirectory(here(name), followLinks: false) {
                walk(here(name), components, into: &folders, links: &links)
            }
            return
        }
        for name in matching(first, in: directory) where Self.isDirectory(here(name), followLinks: true) {
            walk(here(name), components.dropFirst(), into: &folders, links: &links)
        }
    }

    /// The names in `directory` that the glob component `component` can match.
    private func matching(_ component: String, in directory: String) -> [String] {
        InputEnumerator.isGlob(component) || caseInsensitive
            ? Self.entries(of: directory).filter { InputEnumerator.nameMatches(component, $0, caseInsensitive: caseInsensitive) }
            : [component]
    }

    // MARK: Building blocks

    /// The targets for one input pattern, as the source that reads it says.
    private static func targets(_ pattern: String, base: String) -> [Target] {
        InputSources.source(of: pattern).watchTargets(pattern, base: base)
    }

    /// Whether the file at `path` (absolute, normalized) is one `target` names or its glob matches.
    static func matches(_ target: Target, _ path: String, caseInsensitive: Bool) -> Bool {
        switch target {
        case .file(let file):
            return file == path
        case .glob(let root, let components):
            let prefix = root == "/" ? "/" : root + "/"
            guard path.hasPrefix(prefix) else { return false }
            let names = path.dropFirst(prefix.count).split(separator: "/").map(String.init)
            return InputEnumerator.matches(components[...], names[...], caseInsensitive: caseInsensitive)
        }
    }

    /// The shapes of the paths `outputs` write (`OutputPathShape`: the input's values any text
    /// without a `/`, `{dir}` any folders, sizes digits), with their own names, formats and art
    /// tags: so narrow that an input or an overlay beside the outputs (`photos/dune-sunset.jpg`
    /// by `photos/{stem}-{width}.webp`) is not taken for one. A tile pyramid's folder stands for
    /// all it holds.
    static func shapes(of outputs: [OutputDefinition], base: URL) -> (files: [OutputPathShape], folders: [OutputPathShape]) {
        var files: [OutputPathShape] = []
        var folders: [OutputPathShape] = []
        for definition in outputs {
            let output = OutputTarget.Output(definition, baseDirectory: base)
            guard let layout = definition.tiles?.layout else {
                if let shape = OutputPathShape(output) { files.append(shape) }
                continue
            }
            if layout == .dz, let descriptor = OutputPathShape(output) { files.append(descriptor) }
            if let folder = OutputPathShape(output, folderOf: layout) { folders.append(folder) }
        }
        return (files, folders)
    }

    /// `path` made absolute against `base` and normalized, as planning makes input paths.
    static func absolute(_ path: String, base: String) -> String {
        InputEnumerator.normalize(path.hasPrefix("/") ? path : base + "/" + path)
    }

    /// Where the symbolic links on `path` and above it that name nothing point, as absolute paths.
    static func danglingLinks(above path: String) -> [String] {
        var targets: [String] = []
        var current = path
        while current != "/", !current.isEmpty {
            if isSymbolicLink(current), !isDirectory(current, followLinks: true),
                let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current)
            {
                let folder = (current as NSString).deletingLastPathComponent
                targets.append(destination.hasPrefix("/") ? destination : (folder as NSString).appendingPathComponent(destination))
            }
            current = (current as NSString).deletingLastPathComponent
        }
        return targets.map { ($0 as NSString).standardizingPath }
    }

    static func nearestExisting(_ directory: String) -> String {
        var folder = directory
        while folder != "/", !isDirectory(folder, followLinks: true) {
            folder = (folder as NSString).deletingLastPathComponent
        }
        return folder.isEmpty ? "/" : folder
    }

    private static func entries(of directory: String) -> [String] {
        LongPath.listing(of: directory).names
    }

    static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    static func isDirectory(_ path: String, followLinks: Bool) -> Bool {
        var info = stat()
        let status = followLinks ? stat(path, &info) : lstat(path, &info)
        return status == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
