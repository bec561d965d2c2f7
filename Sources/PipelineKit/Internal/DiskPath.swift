import Foundation

/// A path as the disk tells paths apart: byte for byte. Swift's strings compare by canonical
/// equivalence, so an "é" written precomposed and one written decomposed would be one key, where
/// they name two files.
package struct DiskPath: Hashable, Sendable {
    /// The path, as written.
    package let path: String

    /// `path`, compared byte for byte.
    package init(_ path: String) { self.path = path }

    /// `resolved` (`written` when nil), kept as `written` when the two are the same bytes: a
    /// plan of many inputs then holds one copy of each path, not two.
    init(sharing written: String, orElse resolved: String?) {
        guard let resolved, !resolved.utf8.elementsEqual(written.utf8) else {
            path = written
            return
        }
        path = resolved
    }

    package static func == (left: DiskPath, right: DiskPath) -> Bool { left.path.utf8.elementsEqual(right.path.utf8) }

    package func hash(into hasher: inout Hasher) {
        var path = path
        path.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
