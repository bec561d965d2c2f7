import Foundation

/// Where the input globs of a pipeline file reach. Every run lists them again, so a file one run
/// writes there is an input of the next, which then refuses to write over it: a glob that takes
/// in what the run writes is refused before the first run.
struct InputReach {
    /// One glob among the inputs (an entry, or a line of a list file) and what it matches: its
    /// folder as written and, when links lead elsewhere, as the links lead.
    struct Glob {
        let pattern: WatchScope.InputPattern
        var targets: [WatchScope.Target]
    }

    /// A folder a glob's walk entered through a symbolic link (`in/*/*.jpg` reaching `in/made`,
    /// a link to `../made`): where the link leads, and the glob's components left to match there.
    struct LinkedFolder {
        /// Where the file sets the glob, and the glob as written there.
        let place: String
        let pattern: String
        let root: String
        let components: [String]
    }

    private(set) var globs: [Glob]
    /// The `s3://` globs among the inputs, with their keys' matchers: a bucket is listed again
    /// on every run just as a folder is.
    let objectGlobs: [(pattern: WatchScope.InputPattern, bucket: String, key: S3KeyGlob)]
    private let caseInsensitive: Bool
    /// The pipeline file's folder with a trailing slash: paths in it are named relative to it.
    private let baseFolder: String

    /// The reach of `definition`'s local globs; its list files are read now.
    init(definition: PipelineDefinition) {
        caseInsensitive = definition.caseInsensitive
        let base = definition.baseDirectory.path
        baseFolder = base.hasSuffix("/") ? base : base + "/"
        let patterns = WatchScope.inputPatterns(of: definition).patterns
        globs = patterns.compactMap { pattern in
            var targets: [WatchScope.Target] = []
            for case .glob(let root, let components) in pattern.targets {
                targets.append(.glob(root: root, components: components))
                // A folder on the glob's way may be a link: the listing goes where it leads.
                if let real = WriteCheck.realPath(root), real != root { targets.append(.glob(root: real, components: components)) }
            }
            return targets.isEmpty ? nil : Glob(pattern: pattern, targets: targets)
        }
        // An entry of `inputs`, or a line of a list file.
        objectGlobs = patterns.compactMap { pattern in
            guard let location = S3Location(pattern.pattern),
                let key = S3KeyGlob(pattern: pattern.pattern, caseInsensitive: definition.caseInsensitive)
            else { return nil }
            return (pattern, location.bucket, key)
        }
    }

    /// Whether there is no glob to check writes against.
    var isEmpty: Bool { globs.isEmpty && objectGlobs.isEmpty }

    /// Adds the folders the listing's walks entered through links to the globs that entered them.
    mutating func include(_ folders: [LinkedFolder]) {
        // Each brace alternative's walk may enter a linked folder again: each is added once.
        var known: [Int: Set<WatchScope.Target>] = [:]
        for folder in folders {
            guard let index = globs.firstIndex(where: { $0.pattern.place == folder.place && $0.pattern.pattern == folder.pattern })
            else { continue }
            let target = WatchScope.Target.glob(root: folder.root, components: folder.components)
            if known[index, default: Set(globs[index].targets)].insert(target).inserted { globs[index].targets.append(target) }
        }
    }

    /// The first glob that takes in a file written at `path`, whose folder's links lead to
    /// `realPath`: a later listing may find it by either.
    func glob(takingIn path: String, realPath: String) -> WatchScope.InputPattern? {
        globs.first { glob in
            glob.targets.contains { target in
                WatchScope.matches(target, path, caseInsensitive: caseInsensitive)
                    || (realPath != path && WatchScope.matches(target, realPath, caseInsensitive: caseInsensitive))
            }
        }?.pattern
    }

    /// The first `s3://` glob that takes in the object at `address`.
    func glob(takingInObject address: String) -> WatchScope.InputPattern? {
        guard let object = S3Location(address) else { return nil }
        return objectGlobs.first { glob in glob.bucket == object.bucket && glob.key.matchedParts(of: object.key) != nil }?.pattern
    }

    /// The problem of the glob `pattern` taking in `path`, which `writer` (`output "small"`,
    /// `the manifest`) writes.
    func problem(_ pattern: WatchScope.InputPattern, takingIn path: String, writtenBy writer: String) -> PipelineFileError.Problem {
        let shown = path.hasPrefix(baseFolder) ? String(path.dropFirst(baseFolder.count)) : path
        return .init(
            path: pattern.place, location: pattern.location,
            message:
                "\"\(pattern.pattern)\" takes in what \(writer) writes (\(shown)): the next run would read it as an input "
                + "and refuse to write over it; narrow the glob, or write where it does not reach")
    }
}
