import Foundation

/// Paths longer than the kernel takes in one call (PATH_MAX, 4096 bytes with the NUL): `stat`,
/// `open` and a folder's listing fail on them with ENAMETOOLONG, so a walk of folders that used
/// only paths would pass over the files deep in a tree without a word. Such a path is reached a
/// piece at a time instead, each piece a run of whole components opened relative to the folder
/// before it, so that the walk still finds those files and the plan can refuse them by name.
enum LongPath {
    /// Whether `path` is longer than the kernel takes in one call.
    static func isTooLong(_ path: String) -> Bool {
        path.utf8.count > OutputTarget.maxPathBytes
    }

    /// `stat` (or `lstat`) of `path`, of any length: 0, or -1 with errno set.
    static func status(of path: String, _ info: inout stat, followLinks: Bool) -> Int32 {
        guard isTooLong(path) else { return followLinks ? stat(path, &info) : lstat(path, &info) }
        return inParent(of: path) { folder, name in
            fstatat(folder, name, &info, followLinks ? 0 : AT_SYMLINK_NOFOLLOW)
        } ?? -1
    }

    /// What a folder holds, unsorted: the names a path can be made of, and those that are not
    /// UTF-8. A `String` cannot hold such a name (its bytes would be replaced), so nothing can
    /// open the file by it; the walk names them instead of passing over them.
    struct Listing {
        var names: [String] = []
        var undecodable: [UndecodableName] = []
        /// Why the folder could not be read (`errno`), nil when it was.
        var failure: Int32?

        /// What to say of a folder that is there but could not be read (no permission), nil
        /// when it was read or is not there.
        var unreadable: String? {
            guard let failure, failure != ENOENT else { return nil }
            return "a folder that cannot be read: \(String(cString: strerror(failure)))"
        }
    }

    /// A name in a folder that is not UTF-8.
    struct UndecodableName {
        /// The name with each byte that is not UTF-8 replaced by U+FFFD (�), as `ls` shows it
        /// with `?`: for messages, and for matching a glob against.
        let replaced: String
        /// Whether the folder's listing says it is a folder.
        let isFolder: Bool
    }

    /// What the folder at `path`, of any length, holds; empty when it cannot be read.
    static func listing(of path: String) -> Listing {
        let descriptor =
            isTooLong(path)
            ? inParent(of: path) { folder, name in openat(folder, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } ?? -1
            : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return Listing(failure: errno) }
        // `closedir` closes the descriptor too.
        guard let directory = fdopendir(descriptor) else {
            let failure = errno
            close(descriptor)
            return Listing(failure: failure)
        }
        defer { closedir(directory) }
        var listing = Listing()
        while let entry = readdir(directory) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if bytes == [UInt8(ascii: ".")] || bytes == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            if let name = String(validating: bytes, as: UTF8.self) {
                listing.names.append(name)
            } else {
                listing.undecodable.append(
                    UndecodableName(replaced: String(decoding: bytes, as: UTF8.self), isFolder: entry.pointee.d_type == UInt8(DT_DIR)))
            }
        }
        return listing
    }

    /// `body` with a descriptor of the folder holding `path`'s last component, reached a piece
    /// of at most `OutputTarget.maxPathBytes` at a time, and that component; nil (errno set) when a
    /// folder on the way cannot be opened.
    private static func inParent<Result>(of path: String, _ body: (Int32, String) -> Result) -> Result? {
        var components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let last = components.popLast() else { return nil }
        var folder = open("/", openPath | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return nil }
        defer { close(folder) }
        // One step per piece; each piece takes at least one component, so the loop ends.
        var piece = ""
        for component in components + [nil] {
            if let component, piece.isEmpty || piece.utf8.count + 1 + component.utf8.count <= OutputTarget.maxPathBytes {
                piece += piece.isEmpty ? String(component) : "/" + component
                continue
            }
            if !piece.isEmpty {
                let next = openat(folder, piece, openPath | O_DIRECTORY | O_CLOEXEC)
                guard next >= 0 else { return nil }
                close(folder)
                folder = next
            }
            piece = component.map(String.init) ?? ""
        }
        return body(folder, String(last))
    }

    /// Why a local input at `path` is refused before any work, or nil: a path the kernel does not
    /// take cannot be opened by libvips, nor by anything else that reads by path.
    static func refusal(of path: String) -> String? {
        guard isTooLong(path) else { return nil }
        return "refused: its path is \(path.utf8.count) bytes long, more than the \(OutputTarget.maxPathBytes) "
            + "a path may have (PATH_MAX): nothing can open it by its path; move it nearer the root or shorten its folders' names"
    }

    /// `path` shortened in the middle when it is too long for the kernel, for messages: its first
    /// and last 60 characters with "…" between.
    static func displayed(_ path: String) -> String {
        guard isTooLong(path), path.count > 2 * shownEnds + 1 else { return path }
        return String(path.prefix(shownEnds)) + "…" + String(path.suffix(shownEnds))
    }

    /// Linux's O_PATH, which Swift's Glibc module does not export: a folder on the way is only
    /// passed through, so it needs search permission and not read permission, as in a path.
    private static let openPath: Int32 = 0o10_000_000

    /// The characters of each end that `displayed` shows.
    static let shownEnds = 60
}
