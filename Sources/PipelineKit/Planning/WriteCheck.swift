import Foundation

/// A file's identity on disk, as the kernel knows it: its device and inode. Two paths that
/// reach one file (through a symbolic link, a bind mount or a hard link) share it.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of what is at `path` (the link itself, unless `followingLinks`); nil when
    /// nothing is.
    init?(path: String, followingLinks: Bool) {
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

/// The local inputs of a run by identity: what the commit of an output must never rename over,
/// even when a symbolic link made during the run leads the output's path to one.
struct ProtectedInputs: Sendable {
    private let names: [FileIdentity: String]

    init(_ names: [FileIdentity: String] = [:]) {
        self.names = names
    }

    /// The input that the directory entry at `path` is, if it is one (a rename replaces the
    /// entry itself, not what a link in it leads to).
    func input(at path: String) -> String? {
        guard !names.isEmpty, let identity = FileIdentity(path: path, followingLinks: false) else { return nil }
        return names[identity]
    }
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

            /// `subject` (the output's name, for an output's writer) set at `place`.
            init(place: String, location: SourceLocation?, subject: String, root: String?) {
                self.place = place
                self.location = location
                self.subject = subject
                self.root = root
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

        /// A write that is not an output's: the manifest, the journal, a trace or report file.
        init(place: String, location: SourceLocation?, what: String, path: String, root: String?) {
            writer = Writer(place: place, location: location, subject: what, root: root)
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

    private var realPaths: [DiskPath: String] = [:]

    /// The problems found, and the inputs' identities for the commit to check again.
    /// `inputs`: each local source once with its real path (as the plan's source keys have it),
    /// `count` of them at most (read lazily from the plan rather than copied).
    mutating func check(inputs: some Sequence<(input: InputFile, real: DiskPath)>, count: Int, writes: [Write], cacheFolder: String?) -> (
        problems: [PipelineFileError.Problem], protected: ProtectedInputs
    ) {
        var problems: [PipelineFileError.Problem] = []
        // Sized up front: a plan of many inputs would otherwise hold a table and its doubled
        // successor at once while it grows.
        var byRealPath: [DiskPath: String] = [:]
        var byIdentity: [FileIdentity: String] = [:]
        byRealPath.reserveCapacity(count)
        byIdentity.reserveCapacity(count)
        for (input, real) in inputs {
            if byRealPath[real] == nil { byRealPath[real] = input.displayName }
            if let identity = FileIdentity(path: input.path, followingLinks: true), byIdentity[identity] == nil {
                byIdentity[identity] = input.displayName
            }
        }
        if let cacheFolder {
            let cache = resolve(cacheFolder) + "/"
            for (real, name) in byRealPath where real.path.utf8.starts(with: cache.utf8) {
                problems.append(
                    .init(
                        path: "cache", location: nil,
                        message:
                            "the input \(name) lies in the cache folder \(cacheFolder), where the run writes and removes files"))
            }
        }
        // Each real path written, and the index in `writes` of what writes it.
        var writers: [DiskPath: Int] = [:]
        writers.reserveCapacity(writes.count)
        // S3 objects are compared where the plan compares outputs: they have no real path.
        for (index, write) in writes.enumerated() where !S3Location.isS3(write.path) {
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
            let existing = FileIdentity(path: write.path, followingLinks: false)
            if let input = byRealPath[real] ?? existing.flatMap({ byIdentity[$0] }) {
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message:
                            "\(write.what) would overwrite the input \(input)\(through): nothing may write where the run reads"))
                continue
            }
            if let earlier = writers[real] {
                let other = writes[earlier]
                // Two outputs planned to one path are reported where the plan compares outputs.
                if !(other.isOutput && write.isOutput && other.path == write.path) {
                    problems.append(
                        .init(
                            path: write.place, location: write.location,
                            message:
                                "\(write.what) and \(other.what) would both write \(real.path)"))
                }
                continue
            }
            writers[real] = index
        }
        return (problems, ProtectedInputs(byIdentity))
    }

    /// `path` with the links in it followed, as far as it exists; the rest as written.
    private mutating func resolve(_ path: String) -> String {
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
