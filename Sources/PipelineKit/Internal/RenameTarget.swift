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
        // `/dev/stdout` is a link to `/proc/self/fd/1`, which leads to whatever standard output
        // is, a regular file too: renamed over, the link is gone, and nothing is written there.
        if isLink, let opened = openFileOfAProcess(path) { return "a symbolic link to an open file of a process (\(opened))" }
        // A link leading nowhere is replaced as a link is: nothing is reached through it.
        if isLink, stat(path, &status) != 0 { return nil }
        let kind = status.st_mode & S_IFMT
        guard kind != S_IFREG, folders || kind != S_IFDIR else { return nil }
        return (isLink ? "a symbolic link to " : "") + RegularFile.kind(of: status)
    }

    /// The path in `/proc` that the link at `path` leads through (`/proc/self/fd/1`), following
    /// its links one at a time, or nil when it leads nowhere there.
    private static func openFileOfAProcess(_ path: String) -> String? {
        var current = path
        // Bounded as the system bounds a chain of links.
        for _ in 0..<40 {
            let folder = (current as NSString).deletingLastPathComponent
            if let real = realpath(folder, nil) {
                defer { free(real) }
                let resolved = String(cString: real)
                if resolved == "/proc" || resolved.hasPrefix("/proc/") { return resolved + "/" + (current as NSString).lastPathComponent }
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let target = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : (folder.isEmpty ? "." : folder) + "/" + target
            if current == "/proc" || current.hasPrefix("/proc/") { return current }
        }
        return nil
    }
}
