import Foundation

/// A file's identity on disk, as the kernel knows it: its device and inode. Two paths that
/// reach one file (through a symbolic link, a bind mount or a hard link) share it.
package struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of what is at `path` (the link itself, unless `followingLinks`); nil when
    /// nothing is.
    package init?(path: String, followingLinks: Bool) {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        self.init(info)
    }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// A file a run writes besides its outputs, named by the command line (a trace, a report), to
/// be checked with the outputs before the run starts (`Pipeline.sideWrites`).
public struct SideWrite: Sendable, Equatable {
    /// What writes it, for messages: for example `the trace (--trace)`.
    public let what: String
    /// The file, absolute.
    public let path: String

    /// `what` writes the file at `path` (absolute).
    public init(what: String, path: String) {
        self.what = what
        self.path = path
    }
}

/// A file a run reads besides its inputs: the pipeline file, list files, files that steps load
/// (an overlay), ICC profiles, S3's shared credentials. Nothing the run writes may land on one.
struct ReadFile: Sendable, Equatable {
    /// What it is, for messages: for example `the pipeline file p.json`.
    let what: String
    /// The file, absolute.
    let path: String
}

/// Compares every place a run will write with every local input, and with each other, by real
/// identity: symbolic links in the folders followed, and device and inode for files that exist.
/// Spelling a path differently (a link to the input folder, `in/./`) reaches the same file.
struct WriteCheck {
    /// One place written: an output's file, the manifest, the journal, a trace or report file.
    struct Write {
        /// What writes and where the pipeline file sets it: one for all of an output's files, so
        /// that a plan of many inputs keeps only each file's path and input apart.
        final class Writer: Sendable {
            /// Where in the pipeline file it is set (a JSON path; empty for the command line).
            let place: String
            let location: SourceLocation?
            /// What writes it, or the output's name for an output's files.
            let subject: String
            /// The folder the write may not leave (an output's), or nil.
            let root: String?
            /// A tile pyramid output's settings: it writes more files than its path, in its folder.
            let tiles: TileSettings?
            /// Whether a run of another pipeline file may not write it at the same time (the
            /// manifest), as it may not an output's files (`RunClaim`).
            let isClaimed: Bool

            /// `subject` (the output's name, for an output's writer) set at `place`.
            init(
                place: String, location: SourceLocation?, subject: String, root: String?, tiles: TileSettings? = nil, claimed: Bool = false
            ) {
                self.place = place
                self.location = location
                self.subject = subject
                self.root = root
                self.tiles = tiles
                isClaimed = claimed || root != nil
            }
        }

        let writer: Writer
        /// The input whose output this is, named in `what` (nil for other writes): kept apart,
        /// so that a plan of many inputs makes no sentence per output unless one is said.
        private let input: String?
        let path: String

        var place: String { writer.place }
        var location: SourceLocation? { writer.location }
        var root: String? { writer.root }
        var isOutput: Bool { root != nil }

        /// What writes it, for messages: for example `output "small" of in/a.jpg`.
        var what: String { input.map { "output \"\(writer.subject)\" of \($0)" } ?? writer.subject }

        /// A write that is not an output's: the manifest, the journal, a trace or report file;
        /// `claimed` as the manifest is (`Writer.isClaimed`).
        init(place: String, location: SourceLocation?, what: String, path: String, root: String?, claimed: Bool = false) {
            writer = Writer(place: place, location: location, subject: what, root: root, claimed: claimed)
            input = nil
            self.path = path
        }

        /// The file at `path` that `writer` (an output's, with its root) makes for `input`
        /// (its display name).
        init(_ writer: Writer, input: String, path: String) {
            self.writer = writer
            self.input = input
            self.path = path
        }
    }

    /// Where a write comes from, to make it again for a message: an output of the listing whose
    /// record is at `listing`, or the run's own write at an index.
    enum Origin {
        case output(listing: Int64, index: Int)
        case run(index: Int)
    }

    private var realPaths: [DiskPath: String] = [:]
    /// Each local source by its identity on disk, with the record of its first listing (the plan
    /// finds them by real path).
    private(set) var inputsByIdentity: [FileIdentity: Int64] = [:]
    /// Each local source named by a symbolic link, by the link's own identity.
    private var inputLinks: [FileIdentity: Int64] = [:]
    /// The most links a chain is followed through: as many as Linux follows on one path
    /// (MAXSYMLINKS), past which it would not have been read either.
    private static let linksFollowed = 40
    /// The cache folder as written and through its links, when the run writes one.
    private var cacheFolder: (written: String, real: String)?
    /// Inputs found in the cache folder.
    private var cacheProblems: [PipelineFileError.Problem] = []

    /// Where the run's input globs reach, when a write there is to be refused.
    private var reach: InputReach?

    /// A check of a run whose cache is in `cacheFolder` (nil for none), whose writes may not be
    /// where its input globs `reach`.
    init(cacheFolder: String?, reach: InputReach? = nil) {
        self.reach = reach.flatMap { $0.isEmpty ? nil : $0 }
        if let cacheFolder { self.cacheFolder = (cacheFolder, resolve(cacheFolder) + "/") }
    }

    /// Notes the folders the listing's globs entered through symbolic links, which they reach too.
    mutating func note(_ linkedFolders: [InputReach.LinkedFolder]) {
        reach?.include(linkedFolders)
    }

    /// Notes a local source (once): `input`, its first listing, with the real path its key found,
    /// whose record is at `offset`.
    mutating func note(_ input: InputFile, real: DiskPath, at offset: Int64) {
        if let cacheFolder, real.path.utf8.starts(with: cacheFolder.real.utf8) {
            cacheProblems.append(
                .init(
                    path: "cache", location: nil,
                    message:
                        "the input \(input.displayName) lies in the cache folder \(cacheFolder.written), where the run writes and removes files"
                ))
        }
        let identity = FileIdentity(path: input.path, followingLinks: true)
        if let identity, inputsByIdentity[identity] == nil {
            inputsByIdentity[identity] = offset
        }
        // A symbolic link named as an input, and each link it leads through: writing onto one's
        // name would replace that link.
        var link = input.path
        // Named by its real path, the input is no link: no more looking on the planning path.
        for _ in 0..<(real.path == input.path ? 0 : Self.linksFollowed) {
            guard let own = FileIdentity(path: link, followingLinks: false), own != identity,
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link)
            else { break }
            if inputLinks[own] == nil { inputLinks[own] = offset }
            link = target.hasPrefix("/") ? target : (link as NSString).deletingLastPathComponent + "/" + target
        }
    }

    /// The problems found with `writes` (every place the run writes, each with its origin) and
    /// the inputs noted, and the inputs' identities for the commit to check again. `inputAt`
    /// gives the record of the local source whose real path has a digest, `remake` makes a write
    /// again from its origin, and `plan` names an input from its record, to say a problem.
    /// Each output's file is added to `records`, when given, by its real path.
    consuming func check(
        inputAt: (PathDigest) -> Int64?, reads: [ReadFile], writes: some Sequence<(write: Write, origin: Origin)>,
        remake: (Origin) -> Write?, plan: SpillFile.Reader, records: inout OutputPathRecords.Builder?
    ) -> (problems: [PipelineFileError.Problem], protected: ProtectedInputs) {
        var problems = cacheProblems
        let inputName = { (offset: Int64) in SourceStore.input(at: offset, in: plan)?.displayName ?? "an input of the run" }
        // The other files read, by real path and by identity; one that is not there is not read.
        var readsByPath: [PathDigest: String] = [:]
        var readsByIdentity: [FileIdentity: String] = [:]
        for read in reads {
            guard let real = Self.realPath(read.path), let identity = FileIdentity(path: real, followingLinks: true) else { continue }
            readsByPath[PathDigest(DiskPath(real))] = readsByPath[PathDigest(DiskPath(real))] ?? read.what
            readsByIdentity[identity] = readsByIdentity[identity] ?? read.what
        }
        // Each real path written, and what writes it.
        var writers: [PathDigest: Origin] = [:]
        // The writers a glob takes in, each compared until one of its files is found: by
        // identity, then by place and subject (the widths and formats of one output are several).
        var takenIn: Set<ObjectIdentifier> = []
        var takenInNamed: Set<String> = []
        var globProblems: [PipelineFileError.Problem] = []
        // Each folder a tile pyramid replaces whole, by real path, with the first write of it.
        var replacedFolders: [String: Write] = [:]
        // Each folder the writes need, and those above it, by real path, with the first write
        // in it: one of them planned as a file as well cannot be both.
        var foldersNeeded: [PathDigest: Origin] = [:]
        var lastFolder = ""
        writers.reserveCapacity(inputsByIdentity.count)
        // Each writer a glob takes in, said once for its place and subject.
        func takeIn(_ write: Write, by glob: WatchScope.InputPattern, reach: InputReach, path: String? = nil) {
            takenIn.insert(ObjectIdentifier(write.writer))
            if takenInNamed.insert(write.place + "\u{0}" + write.writer.subject).inserted {
                let writer = write.isOutput ? "output \"\(write.writer.subject)\"" : write.writer.subject
                globProblems.append(reach.problem(glob, takingIn: path ?? write.path, writtenBy: writer))
            }
        }
        for (write, origin) in writes {
            // Objects in a store are compared where the plan compares outputs: they have no real
            // path. An input glob over their bucket would list them on the next run.
            guard !ObjectStores.isObject(write.path) else {
                if let reach, !takenIn.contains(ObjectIdentifier(write.writer)), let glob = reach.glob(takingInObject: write.path) {
                    takeIn(write, by: glob, reach: reach)
                }
                continue
            }
            // The folder through its links; the name itself is what a rename replaces.
            let folder = resolve((write.path as NSString).deletingLastPathComponent)
            let real = DiskPath(
                sharing: write.path, orElse: (folder == "/" ? "" : folder) + "/" + (write.path as NSString).lastPathComponent)
            let through = real.path.utf8.elementsEqual(write.path.utf8) ? "" : " (through a symbolic link, \(real.path))"
            if let root = write.root {
                let realRoot = resolve(root)
                if !folder.utf8.elementsEqual(realRoot.utf8),
                    !folder.utf8.starts(with: realRoot == "/" ? realRoot.utf8 : (realRoot + "/").utf8)
                {
                    problems.append(
                        .init(
                            path: write.place, location: write.location,
                            message:
                                "\(write.what) would write \(write.path), but its folder leads outside \(root) (through a symbolic link, to \(folder))"
                        ))
                    continue
                }
            }
            if let reach, !takenIn.contains(ObjectIdentifier(write.writer)) {
                if let glob = reach.glob(takingIn: write.path, realPath: real.path) {
                    takeIn(write, by: glob, reach: reach)
                } else if let tiles = write.writer.tiles {
                    // A pyramid's tiles lie deeper than its path: a glob may reach them alone.
                    let samples = zip(tiles.sampleFiles(ofPyramidAt: write.path), tiles.sampleFiles(ofPyramidAt: real.path))
                    for (path, realPath) in samples {
                        guard let glob = reach.glob(takingIn: path, realPath: realPath) else { continue }
                        takeIn(write, by: glob, reach: reach, path: path)
                        break
                    }
                }
            }
            if let tiles = write.writer.tiles {
                let replaced = resolve(tiles.layout.replacedFolder(ofPyramidAt: write.path))
                if replacedFolders[replaced] == nil { replacedFolders[replaced] = write }
            }
            // The run's own files (the journal, the manifest, a report) come after the outputs,
            // so every folder a pyramid replaces is known.
            if case .run = origin, let (replaced, pyramid) = Self.folder(holding: real.path, among: replacedFolders) {
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message: "\(pyramid.what) would replace the folder \(replaced) whole each time it is made, and \(write.what) "
                            + "(\(write.path)) is in it: give one of them another path"))
                continue
            }
            let digest = PathDigest(real)
            var entry = stat()
            let existing = lstat(write.path, &entry) == 0 ? FileIdentity(entry) : nil
            if existing != nil, let special = RenameTarget.refusal(entry, at: write.path, folders: false) {
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message: "\(write.what) would replace \(write.path), which is \(special): only a regular file is replaced"))
                continue
            }
            // Found by identity alone, the file has another name: say which path is the one written.
            let sameFile = " (\(write.path) is that file, by a hard link or a mount)"
            if let read = readsByPath[digest] ?? existing.flatMap({ readsByIdentity[$0] }) {
                let how = readsByPath[digest] == nil ? sameFile : through
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message: "\(write.what) would overwrite \(read)\(how): nothing may write where the run reads"))
                continue
            }
            if let input = inputAt(digest) ?? existing.flatMap({ inputsByIdentity[$0] }) {
                let how = inputAt(digest) == nil ? sameFile : through
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message:
                            "\(write.what) would overwrite the input \(inputName(input))\(how): nothing may write where the run reads"))
                continue
            }
            if let input = existing.flatMap({ inputLinks[$0] }) {
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message:
                            "\(write.what) would replace \(write.path), a symbolic link the input \(inputName(input)) is read through: "
                            + "nothing may write where the run reads"
                    ))
                continue
            }
            if let earlier = writers[digest] {
                let other = remake(earlier)
                // Two outputs planned to one path are reported where the plan compares outputs.
                if !(other?.isOutput == true && write.isOutput && other?.path == write.path) {
                    problems.append(
                        .init(
                            path: write.place, location: write.location,
                            message: "\(write.what) and \(other?.what ?? "an earlier write") would both write \(real.path)"))
                }
                continue
            }
            writers[digest] = origin
            if write.writer.isClaimed { records?.add(digest, path: real.path) }
            // The outputs of one folder come one after another: its digest is made once for them.
            if !folder.utf8.elementsEqual(lastFolder.utf8) {
                Self.noteFolder(folder, for: origin, in: &foldersNeeded)
                lastFolder = folder
            }
        }
        for (folder, origin) in foldersNeeded {
            guard let file = writers[folder], let fileWrite = remake(file), let inFolder = remake(origin) else { continue }
            // A pyramid laid out in folders (IIIF, Zoomify, Google) is a folder at its path: what
            // is written in it is checked with the pyramids (`readsReplaced`, the plan's clashes).
            if let tiles = fileWrite.writer.tiles, tiles.layout.replacedFolder(ofPyramidAt: fileWrite.path) == fileWrite.path {
                continue
            }
            problems.append(
                .init(
                    path: fileWrite.place, location: fileWrite.location,
                    message:
                        "\(fileWrite.what) would write the file \(fileWrite.path), which \(inFolder.what) needs as a folder "
                        + "(for \(inFolder.path)): give one of them another path"))
        }
        problems += readsReplaced(with: replacedFolders, reads: reads, plan: plan)
        // The glob first: on a run after the first, what it took in is refused as an input too.
        return (globProblems + problems, ProtectedInputs(inputsByIdentity, plan: plan, otherReads: readsByIdentity))
    }

    /// Notes `folder` (a real path) and those above it as needed by `origin`, up to the first
    /// noted before.
    private static func noteFolder(_ folder: String, for origin: Origin, in needed: inout [PathDigest: Origin]) {
        var folder = folder
        // Bounded by the path's depth: a folder noted before has those above it noted too.
        while folder.count > 1 {
            let digest = PathDigest(DiskPath(folder))
            guard needed[digest] == nil else { return }
            needed[digest] = origin
            folder = (folder as NSString).deletingLastPathComponent
        }
    }

    /// `path` with the links in it followed, as far as it exists; the rest as written.
    mutating func resolve(_ path: String) -> String {
        if let known = realPaths[DiskPath(path)] { return known }
        let resolved: String
        if let real = Self.realPath(path) {
            resolved = real
        } else {
            let parent = (path as NSString).deletingLastPathComponent
            if parent == path || parent.isEmpty {
                resolved = path
            } else {
                let realParent = resolve(parent)
                resolved = (realParent == "/" ? "" : realParent) + "/" + (path as NSString).lastPathComponent
            }
        }
        realPaths[DiskPath(path)] = resolved
        return resolved
    }

    /// `path` with every link in it followed (`realpath`), or nil when it does not all exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
