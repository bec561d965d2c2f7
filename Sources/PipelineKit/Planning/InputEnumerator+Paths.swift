import Foundation

/// The paths inputs are kept by: absolute, normalized, each in a string of its own length.
extension InputEnumerator {
    /// `relative` inside `folder`, in a string of its own length: a plan keeps every input's
    /// path for the run, and one grown by appending keeps the room it grew into.
    static func path(_ relative: String, in folder: String) -> String {
        let separator = folder.hasSuffix("/") ? 0 : 1
        let count = folder.utf8.count + separator + relative.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var end = buffer.initialize(fromContentsOf: folder.utf8)
            if separator == 1 {
                buffer[end] = UInt8(ascii: "/")
                end += 1
            }
            // A slice's indices are the buffer's: this is the end of the whole path.
            return buffer[end...].initialize(fromContentsOf: relative.utf8)
        }
    }

    /// Removes `.` and resolves `..` lexically, as the user wrote the path.
    static func normalize(_ path: String) -> String {
        // Most paths are normal already; a plan makes one for every output of every input.
        if isNormalized(path) { return path }
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether `path` is what `normalize` makes of it: absolute, with no empty, `.` or `..`
    /// component and no `/` at its end.
    static func isNormalized(_ path: String) -> Bool {
        guard path.utf8.first == UInt8(ascii: "/") else { return false }
        // The bytes of the component so far, and how many of them are dots.
        var length = 0
        var dots = 0
        for byte in path.utf8.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if length == 0 || (dots == length && length <= 2) { return false }
                length = 0
                dots = 0
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && !(dots == length && length <= 2)
    }
}
