import Foundation

/// Finds files standing where output folders must be, and folders the run may not write in,
/// looking at each folder once, and naming each such file or folder once.
package struct FolderCheck {
    /// Each folder looked at, and the file in its way (nil when none).
    private var seen: [String: String?] = [:]
    /// Each folder looked at for writing, and the folder that cannot be written in with why (nil when none).
    private var writable: [String: (folder: String, reason: String)?] = [:]
    private var named: Set<String> = []

    /// A check that has looked at nothing yet.
    package init() {}

    /// The folder, `path`'s or the nearest existing one above it (where the missing ones would be
    /// made), that this process may not write in, with the system's reason (a folder without
    /// write permission, a read-only file system), unless named before.
    package mutating func unwritableFolder(of path: String) -> (folder: String, reason: String)? {
        guard let found = unwritable((path as NSString).deletingLastPathComponent), named.insert(found.folder).inserted else {
            return nil
        }
        return found
    }

    private mutating func unwritable(_ folder: String) -> (folder: String, reason: String)? {
        if let known = writable[folder] { return known }
        let found: (folder: String, reason: String)?
        if access(folder, W_OK | X_OK) == 0 {
            found = nil
        } else if errno == ENOENT {
            let parent = (folder as NSString).deletingLastPathComponent
            found = parent == folder || parent.isEmpty ? nil : unwritable(parent)
        } else {
            found = (folder, String(cString: strerror(errno)))
        }
        writable[folder] = found
        return found
    }

    /// The file (not a folder) at `path`'s folder or one of its ancestors, unless named before.
    package mutating func fileInTheWay(of path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        guard let file = blocking(folder), named.insert(file).inserted else { return nil }
        return file
    }

    private mutating func blocking(_ folder: String) -> String? {
        if let known = seen[folder] { return known }
        var info = stat()
        let found: String?
        if stat(folder, &info) == 0 {
            // An existing folder (through symbolic links, as writing follows them) ends the walk.
            found = info.st_mode & S_IFMT == S_IFDIR ? nil : folder
        } else if errno == ENOTDIR {
            let parent = (folder as NSString).deletingLastPathComponent
            found = parent == folder ? nil : blocking(parent)
        } else {
            found = nil
        }
        seen[folder] = found
        return found
    }
}
