import Foundation

/// What may stand at a path a finished file is renamed onto. rename(2) replaces the entry itself,
/// whatever it is: a device node such as `/dev/null` would be gone for every program, a FIFO taken
/// from the process reading it, and a symbolic link to a folder from whoever goes through it. Only
/// a regular file, a symbolic link to one or to nothing, or nothing, is replaced.
enum RenameTarget {
    /// What stands at `path`, in words, when a file may not be renamed onto it: `a character
    /// device`, `a symbolic link to a folder`, …; nil when it may (a folder too, without `folders`).
    static func refusal(at path: String, folders: Bool = true) -> String? {
        var entry = stat()
        guard lstat(path, &entry) == 0 else { return nil }
        return refusal(entry, at: path, folders: folders)
    }

    /// `refusal(at:)` for the entry at `path`, whose `lstat` is `entry`. Without `folders`, a
    /// folder is let be: a tile pyramid's writer replaces its own, and planning leaves one where
    /// an image goes to the commit.
    static func refusal(_ entry: stat, at path: String, folders: Bool = true) -> String? {
        var status = entry
        let isLink = entry.st_mode & S_IFMT == S_IFLNK
        // A link leading nowhere is replaced as a link is: nothing is reached through it.
        if isLink, stat(path, &status) != 0 { return nil }
        let kind = status.st_mode & S_IFMT
        guard kind != S_IFREG, folders || kind != S_IFDIR else { return nil }
        return (isLink ? "a symbolic link to " : "") + RegularFile.kind(of: status)
    }
}
