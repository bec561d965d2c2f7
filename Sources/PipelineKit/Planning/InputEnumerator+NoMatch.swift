import Foundation

extension InputEnumerator {
    /// What a pattern that found nothing says of where it looked: that its folder `root` does
    /// not exist (or is no folder), naming it, since "matches no files" would send the user
    /// looking for files in a folder that is not there; else that nothing in it matches.
    static func noMatchDescription(_ pattern: String, root: String, hint: String) -> String {
        var isFolder: ObjCBool = false
        if let unreachable = InputFile.unreachable(at: root) {
            return "\(pattern.quotedValue) looks in \(root), which \(unreachable)"
        }
        if let broken = InputFile.brokenLink(at: root) {
            return "\(pattern.quotedValue) looks in the folder \(root), which is \(broken)"
        }
        if !FileManager.default.fileExists(atPath: root, isDirectory: &isFolder) {
            return "\(pattern.quotedValue) looks in the folder \(root), which does not exist"
        }
        if !isFolder.boolValue {
            return "\(pattern.quotedValue) looks in \(root), which is a file, not a folder"
        }
        if let unreadable = LongPath.listing(of: root).unreadable {
            return "\(pattern.quotedValue) looks in \(root), \(unreadable)"
        }
        return "\(pattern.quotedValue) matches no files in \(root)\(hint)"
    }
}
