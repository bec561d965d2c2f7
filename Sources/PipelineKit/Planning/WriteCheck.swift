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
        /// Where in the pipeline file it is set (a JSON path; empty for the command line).
        let place: String
        let location: SourceLocation?
        /// What writes it, or the output's name when `input` is set.
        private let subject: String
        /// The input whose output this is, named in `what` (nil for other writes): kept apart,
        /// so that a write shares its strings and a plan of many inputs makes no sentence per
        /// output unless one is said.
        private let input: String?
        let path: String
        /// The folder the write may not leave (an output's), or nil.
        let root: String?
        var isOutput: Bool { root != nil }

        /// What writes it, for messages: for example `output "small" of in/a.jpg`.
        var what: String { input.map { "output \"\(subject)\" of \($0)" } ?? subject }

        /// A write that is not an output's: the manifest, the journal, a trace or report file.
        init(place: String, location: SourceLocation?, what: String, path: String, root: String?) {
            self.place = place
            self.location = location
            self.subject = what
            self.input = nil
            self.path = path
            self.root = root
        }

        /// Output `output`'s file for `input` (its display name), which may not leave `root`.
        init(place: String, location: SourceLocation?, output: String, input: String, path: String, root: String) {
            self.place = place
            self.location = location
            self.subject = output
            self.input = input
            self.path = path
            self.root = root
        }
    }

    private var realPaths: [[UInt8]: String] = [:]

    /// The problems found, and the inputs' identities for the commit to check again.
    mutating func check(inputs: [InputFile], writes: [Write], cacheFolder: String?) -> (
        problems: [PipelineFileError.Problem], protected: ProtectedInputs
    ) {
        var problems: [PipelineFileError.Problem] = []
        // Keyed by bytes: Swift's strings compare by canonical equivalence, the disk does not.
        var byRealPath: [[UInt8]: String] = [:]
        var byIdentity: [FileIdentity: String] = [:]
        for input in inputs where !input.isRemote {
            // Read through links, as reading does.
            let real = Self.realPath(input.path) ?? input.path
            if byRealPath[Array(real.utf8)] == nil { byRealPath[Array(real.utf8)] = input.displayName }
            if let identity = FileIdentity(path: input.path, followingLinks: true), byIdentity[identity] == nil {
                byIdentity[identity] = input.displayName
            }
        }
        if let cacheFolder {
            let cache = Array((resolve(cacheFolder) + "/").utf8)
            for (real, name) in byRealPath where real.starts(with: cache) {
                problems.append(
                    .init(
                        path: "cache", location: nil,
                        message:
                            "the input \(name) lies in the cache folder \(cacheFolder), where the run writes and removes files"))
            }
        }
        var writers: [[UInt8]: Write] = [:]
        for write in writes {
            // The folder through its links; the name itself is what a rename replaces.
            let folder = resolve((write.path as NSString).deletingLastPathComponent)
            let real = (folder == "/" ? "" : folder) + "/" + (write.path as NSString).lastPathComponent
            let through = Array(real.utf8) == Array(write.path.utf8) ? "" : " (through a symbolic link, \(real))"
            if let root = write.root {
                let realRoot = resolve(root)
                let (folderBytes, rootBytes) = (Array(folder.utf8), Array(realRoot.utf8))
                if folderBytes != rootBytes, !folderBytes.starts(with: realRoot == "/" ? rootBytes : rootBytes + [UInt8(ascii: "/")]) {
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
            let key = Array(real.utf8)
            if let input = byRealPath[key] ?? existing.flatMap({ byIdentity[$0] }) {
                problems.append(
                    .init(
                        path: write.place, location: write.location,
                        message:
                            "\(write.what) would overwrite the input \(input)\(through): nothing may write where the run reads"))
                continue
            }
            if let other = writers[key] {
                // Two outputs planned to one path are reported where the plan compares outputs.
                if !(other.isOutput && write.isOutput && other.path == write.path) {
                    problems.append(
                        .init(
                            path: write.place, location: write.location,
                            message:
                                "\(write.what) and \(other.what) would both write \(real)"))
                }
                continue
            }
            writers[key] = write
        }
        return (problems, ProtectedInputs(byIdentity))
    }

    /// `path` with the links in it followed, as far as it exists; the rest as written.
    private mutating func resolve(_ path: String) -> String {
        if let known = realPaths[Array(path.utf8)] { return known }
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
        realPaths[Array(path.utf8)] = resolved
        return resolved
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
