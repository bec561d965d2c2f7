import Foundation

/// What may stand at a path a finished file is renamed onto. rename(2) replaces the entry itself,
/// whatever it is: a device node such as `/dev/null` would be gone for every program, a FIFO taken
/// from the process reading it, and a symbolic link to a folder from whoever goes through it. Only
/// a regular file, a symbolic link to one or to nothing, or nothing, is replaced.
enum RenameTarget {
    /// What stands at `path`, in words, when a file may not be renamed onto it: `a character
    /// device`, `a symbolic link to a folder`, …; nil when it may.
    static func refusal(at path: String) -> String? {
        var entry = stat()
        guard lstat(path, &entry) == 0 else { return nil }
        return refusal(entry, at: path)
    }

    /// `refusal(at:)` for the entry at `path`, whose `lstat` is `entry`.
    static func refusal(_ entry: stat, at path: String) -> String? {
        var status = entry
        let isLink = entry.st_mode & S_IFMT == S_IFLNK
        // A link leading nowhere is replaced as a link is: nothing is reached through it.
        if isLink, stat(path, &status) != 0 { return nil }
        guard status.st_mode & S_IFMT != S_IFREG else { return nil }
        return (isLink ? "a symbolic link to " : "") + RegularFile.kind(of: status)
    }

    /// `refusal(at:)` for a place a run writes, checked before the run: the special files alone
    /// (FIFOs, devices and sockets), since a folder may be a tile pyramid's own, which its writer
    /// replaces, and an image's output finds a folder in its place when it is committed.
    static func specialFile(_ entry: stat, at path: String) -> String? {
        guard let refusal = refusal(entry, at: path), !refusal.hasSuffix("a folder") else { return nil }
        return refusal
    }
}
