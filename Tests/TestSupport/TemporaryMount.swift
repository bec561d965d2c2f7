import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for one test, to meet a full or read-only file system for real
/// (as root, file modes do not stop writes). Unmounted when the value goes away.
package final class TemporaryMount {
    private let directory: TemporaryDirectory
    package var path: String { directory.path }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Mounts a tmpfs of `size` bytes (`"512k"`) on a fresh folder; `populate` runs before a
    /// read-only mount is made read-only.
    package init(size: String, readOnly: Bool = false, populate: (String) throws -> Void = { _ in }) throws {
        directory = try TemporaryDirectory()
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(size),mode=0755") == 0 else {
            throw Failure(description: "mount tmpfs: \(String(cString: strerror(errno)))")
        }
        try populate(directory.path)
        if readOnly {
            let flags = UInt(MS_REMOUNT) | UInt(MS_RDONLY)
            guard mount("tmpfs", directory.path, "tmpfs", flags, "size=\(size)") == 0 else {
                let reason = String(cString: strerror(errno))
                umount2(directory.path, Int32(MNT_DETACH))
                throw Failure(description: "remount read-only: \(reason)")
            }
        }
    }

    deinit {
        umount2(directory.path, Int32(MNT_DETACH))
    }

    /// A small read-only tmpfs holding one empty folder, `folder`.
    package static func readOnly(holding folder: String) throws -> TemporaryMount {
        try TemporaryMount(size: "64k", readOnly: true) { path in
            try FileManager.default.createDirectory(atPath: path + "/" + folder, withIntermediateDirectories: false)
        }
    }

    /// Whether this process may mount a tmpfs (root, or CAP_SYS_ADMIN); tests that need one
    /// are skipped, with this reason, where it may not.
    package static let isSupported: Bool = (try? TemporaryMount(size: "16k")) != nil
}
