import Foundation
import Vips

/// Writes a file so that the target path only ever holds a whole file: the content goes to a
/// temporary file beside the target, is flushed to disk, and the temporary file is renamed over
/// the target in one step. On any failure the temporary file is removed.
enum ImageWriter {
    /// Temporary files carry this marker, so a later run can recognise leftovers of a killed one.
    static let temporaryMarker = ".pipeline-tmp-"

    /// Creates the temporary file `path` (which must not exist yet) for a file others may read
    /// once finished: opened private, then given `Vips.newFileMode`, 0666 less the umask the
    /// process started with. liborc narrows the umask for a moment while libvips runs, so a mode
    /// left to the umask could come out private. -1 with `errno` set when it cannot be created.
    static func createTemporary(_ path: String, flags: Int32) -> Int32 {
        let descriptor = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { fchmod(descriptor, Vips.newFileMode) }
        return descriptor
    }

    /// Creates `path` through `fill`, which writes the content into the descriptor it is given.
    /// - Returns: the size of the finished file in bytes.
    static func write(to path: String, root: String, fill: (Int32) throws(ItemError) -> Void) throws(ItemError) -> Int {
        try writeUncommitted(to: path, root: root, fill: fill).commit()
    }

    /// A file written under its temporary name beside `path`, not yet flushed to disk nor
    /// renamed into place: `commit()` does both, or removes it. Flushing waits on the disk, so
    /// the runner commits on threads of its own (`FileCommitter`) while the encode lane goes
    /// on to the next output.
    struct UncommittedFile: Sendable {
        let path: String
        let temporary: String
        let descriptor: Int32
        /// The size of the file in bytes.
        let byteCount: Int
        /// The run's local inputs, which the rename must not replace.
        var protectedInputs = ProtectedInputs()

        /// Flushes the file and renames it over `path`, so that even a power cut leaves the old
        /// file or the whole new one; on any failure the temporary file is removed.
        /// - Returns: the size of the file in bytes.
        func commit() throws(ItemError) -> Int {
            try flush()
            _ = try moveIntoPlace()
            return byteCount
        }

        /// Flushes the file to disk; on failure closes and removes it.
        func flush() throws(ItemError) {
            guard fsync(descriptor) == 0 else {
                let error = ImageWriter.systemError("cannot flush \(path) to disk")
                closeAndRemove()
                throw error
            }
        }

        /// Closes the file and removes it wherever it now is: a folder renamed during the run
        /// takes the file along, and its path as written then names nothing.
        func closeAndRemove() {
            if unlink(temporary) != 0, errno == ENOENT, let moved = ImageWriter.currentPath(of: descriptor) { unlink(moved) }
            close(descriptor)
        }

        /// Renames the flushed file over `path` and closes it; on failure removes it.
        /// - Returns: the file as it was put in place, read from its descriptor.
        func moveIntoPlace() throws(ItemError) -> FileStamp? {
            // Checked at the last moment too: a symbolic link made during the run may lead the
            // path to an input, and a width narrowed to the image's own names a path known only
            // once it was decoded, neither of which planning could see.
            if let read = protectedInputs.readFile(at: path) {
                closeAndRemove()
                let linked = WriteCheck.realPath(path).map { !$0.utf8.elementsEqual(path.utf8) } ?? false
                let how =
                    linked
                    ? "a symbolic link made during the run leads there"
                    : "a path known only once the image was decoded, as a width narrowed to the image's own is"
                throw ItemError(.outputPath, stage: .encode, reason: "\(path) is \(read) (\(how)): it was not overwritten")
            }
            // A folder, a device or a FIFO (or a link to one), which the rename would replace.
            if let refusal = RenameTarget.refusal(at: path) {
                closeAndRemove()
                throw ItemError(.outputPath, stage: .encode, reason: "\(path) is \(refusal): the file was not put in its place")
            }
            guard rename(temporary, path) == 0 else {
                let error = ImageWriter.systemError("cannot move the finished file to \(path)")
                closeAndRemove()
                throw error
            }
            // Read from the descriptor, not the path: another process may rename its own file
            // over the path at once, which the journal must not take for this one.
            let committed = FileStamp(descriptor: descriptor)
            // Closed only now, so that a failed rename can still find the file to remove; the
            // flush before has reported any error writing it, so closing has none left to tell.
            close(descriptor)
            return committed
        }
    }

    /// Where the file or folder open as `descriptor` is now, as the kernel tracks it through
    /// renames of its folders; nil once it is removed.
    static func currentPath(of descriptor: Int32) -> String? {
        guard let path = FileFetcher.linkTarget("/proc/self/fd/\(descriptor)") else { return nil }
        // A removed entry's link reads "PATH (deleted)", and there is nothing left to remove.
        return path.hasPrefix("/") && !path.hasSuffix(" (deleted)") ? path : nil
    }

    /// Writes `path`'s content through `fill` into a temporary file beside it, which the result
    /// owns until its `commit()`. On any failure here the temporary file is removed.
    static func writeUncommitted(
        to path: String, root: String, protecting inputs: ProtectedInputs = ProtectedInputs(),
        fill: (Int32) throws(ItemError) -> Void
    ) throws(ItemError) -> UncommittedFile {
        let folder = try preparedFolder(for: path, root: root)
        let name = (path as NSString).lastPathComponent
        let temporary = folder + "/" + temporaryName(for: name)
        // Readable: libtiff reads back the directories it links when it writes a pyramid.
        let descriptor = createTemporary(temporary, flags: O_RDWR)
        guard descriptor >= 0 else {
            if errno == EMFILE {
                throw ItemError(
                    .writing, stage: .encode, reason: "cannot write in \(folder): \(OpenFileLimit.reason)",
                    underlying: POSIXError(.EMFILE))
            }
            throw ItemError.system(.writing, stage: .encode, "cannot write in \(folder)")
        }
        do throws(ItemError) {
            do {
                try fill(descriptor)
            } catch {
                // The encoder's message comes through libvips' shared error buffer, which a
                // failure on another thread can garble; a full disk or a file past its size
                // limit is checked for directly.
                if let code = spaceProblem(on: descriptor, encoderSaid: (error.underlyingError as? VipsError)?.message ?? error.reason) {
                    throw ItemError.system(.writing, stage: .encode, "cannot write \(path)", code: code)
                }
                if isWriteFailure(error.reason) {
                    // libvips loses the system's reason ("Unknown error -1"): name the file at least.
                    throw ItemError(.writing, stage: .encode, reason: "cannot write \(path): \(error.reason)", underlying: error)
                }
                if OpenFileLimit.isReached || OpenFileLimit.isReported(in: error.reason) {
                    throw ItemError(.writing, stage: .encode, reason: "cannot write \(path): \(OpenFileLimit.reason)", underlying: error)
                }
                throw error
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw systemError("cannot write \(path)") }
            return UncommittedFile(
                path: path, temporary: temporary, descriptor: descriptor, byteCount: Int(info.st_size), protectedInputs: inputs)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
    }

    /// The folder `path` is written in, created if missing, once `path` is known to lie below
    /// `root` (as written, and through any symbolic links in the folder).
    static func preparedFolder(for path: String, root: String) throws(ItemError) -> String {
        // Checked before anything is created: no folder may appear outside the root either.
        try checkLexicallyInsideRoot(path: path, root: root)
        let folder = (path as NSString).deletingLastPathComponent
        try makeFolder(folder)
        try checkInsideRoot(folder: folder, root: root)
        return folder
    }

    /// ENOSPC ("No space left on device", or EDQUOT for a quota) when the file system under
    /// `descriptor` cannot take another 64 KiB now, or EFBIG when the file is at the process's
    /// size limit (`ulimit -f`), else nil. Probes by writing at the end of the doomed temporary
    /// file. When the encoder failed saying a write failed, or saying nothing, a file system
    /// nearly full counts as full too: other outputs that failed at once may have freed their
    /// space before the probe, and libvips' message has lost the system's reason (or all of
    /// it, to another thread's failure, which takes what libvips' shared buffer holds). nil
    /// for `message`: the encoder did not fail.
    static func spaceProblem(on descriptor: Int32, encoderSaid message: String?) -> Int32? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        let probe = [UInt8](repeating: 0, count: 65536)
        var offset = 0
        // A short write is followed by another, which says why: a full disk, or the file size
        // limit (`ulimit -f`), which also cuts a write short first. Bounded: each pass writes
        // something or returns.
        while offset < probe.count {
            let written = probe.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + offset, $0.count - offset, info.st_size + off_t(offset))
            }
            if written < 0 { return [ENOSPC, EDQUOT, EFBIG].contains(errno) ? errno : nil }
            if written == 0 { return ENOSPC }
            offset += written
        }
        var volume = statvfs()
        guard let message, message.isEmpty || isWriteFailure(message), fstatvfs(descriptor, &volume) == 0 else { return nil }
        let free = Int64(volume.f_bavail) * Int64(volume.f_frsize)
        return free < nearlyFullBytes ? ENOSPC : nil
    }

    /// Free space below which a file system an encoder failed to write to is taken as full.
    static let nearlyFullBytes: Int64 = 16 << 20

    /// Whether libvips' message says writing its target failed (rather than encoding).
    static func isWriteFailure(_ message: String) -> Bool {
        message.contains("write failed") || message.contains("unable to write to target") || message.contains("unix error")
    }

    fileprivate static func systemError(_ what: String) -> ItemError {
        ItemError.system(.writing, stage: .encode, what)
    }

    /// The random characters that end a temporary name.
    static let temporaryRandomCharacters = 8

    /// The bytes `temporaryName(for:)` adds to a name: its dot, marker, owner and random part.
    static let temporaryNameOverhead =
        1 + (temporaryMarker + TemporaryFileSweeper.ownerTag + "-").utf8.count + temporaryRandomCharacters

    /// The temporary file for an output named `name`: hidden, marked, and carrying the writing
    /// process's id, its machine's tag and when it started (`<pid>-<machine>-<start>-<random>`),
    /// so that a later run can tell a killed run's leftovers from a live run's work, here or on
    /// another machine sharing the folder (`TemporaryFileSweeper`). The name part is cut so the
    /// whole stays within the 255 bytes a file name may have, for any output name that itself fits.
    static func temporaryName(for name: String) -> String {
        let suffix = temporaryMarker + TemporaryFileSweeper.ownerTag + "-" + UUID().uuidString.prefix(temporaryRandomCharacters)
        var kept = ""
        var bytes = 1 + suffix.utf8.count
        for scalar in name.unicodeScalars {
            bytes += String(scalar).utf8.count
            guard bytes <= 255 else { break }
            kept.unicodeScalars.append(scalar)
        }
        return "." + kept + suffix
    }

    /// When this process started, in clock ticks after boot: with its id, it tells this process
    /// from an earlier one given the same id, as each start of a container's first process is.
    static let processStart: String = TemporaryFileSweeper.startTime(of: getpid()) ?? "0"

    /// Eight hexadecimal digits for this machine and boot: its host name (a container's own,
    /// in a pod or on a cluster node) and the kernel's boot id, so that process ids, which only
    /// mean something on one machine since one boot, are asked about only there.
    static let machineTag: String = {
        // gethostname, not ProcessInfo.hostName, which may ask DNS for the canonical name.
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        return String(FNV1a.hex(host + "\n" + boot).prefix(8))
    }()

    /// The path, read as the kernel reads it (bytes between slashes), lies below the root and
    /// has no `.` or `..` parts. Swift's `String` compares by canonical equivalence and treats
    /// a slash followed by a combining mark as one character; the file system does neither.
    private static func checkLexicallyInsideRoot(path: String, root: String) throws(ItemError) {
        let slash = UInt8(ascii: "/")
        let rootBytes = Array(root.utf8.reversed().drop { $0 == slash }.reversed())
        let pathBytes = Array(path.utf8)
        let parts = pathBytes.split(separator: slash, omittingEmptySubsequences: true)
        let inside =
            pathBytes.starts(with: rootBytes + [slash]) && pathBytes.count > rootBytes.count + 1
            && pathBytes.first == slash && !pathBytes.contains(0)
            && !parts.contains { $0.elementsEqual([0x2E]) || $0.elementsEqual([0x2E, 0x2E]) }
        guard inside else {
            throw ItemError(.outputPath, stage: .encode, reason: "the path \(path) would leave the output folder \(root)")
        }
    }

    /// A symbolic link inside the output folder must not lead the write outside it. Compared
    /// byte for byte: two spellings of one name in Unicode are two folders on disk.
    private static func checkInsideRoot(folder: String, root: String) throws(ItemError) {
        guard let realFolder = WriteCheck.realPath(folder), let realRoot = WriteCheck.realPath(root) else {
            throw ItemError(.outputPath, stage: .encode, reason: "cannot resolve the output folder \(folder)")
        }
        let folderBytes = Array(realFolder.utf8)
        let rootBytes = Array(realRoot.utf8)
        let prefix = realRoot == "/" ? rootBytes : rootBytes + [UInt8(ascii: "/")]
        guard folderBytes == rootBytes || folderBytes.starts(with: prefix) else {
            throw ItemError(
                .outputPath, stage: .encode, reason: "the output folder \(folder) leads outside \(root) (through a symbolic link)")
        }
    }

    /// Creates `folder` and its missing parents with mkdir(2), so a failure carries the
    /// system's own reason ("Read-only file system", "No space left on device").
    private static func makeFolder(_ folder: String) throws(ItemError) {
        var info = stat()
        if stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return }
        let parent = (folder as NSString).deletingLastPathComponent
        if parent != folder, !parent.isEmpty { try makeFolder(parent) }
        guard mkdir(folder, 0o777) == 0 || (errno == EEXIST && stat(folder, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR) else {
            throw systemError("cannot create the folder \(folder)")
        }
    }
}
