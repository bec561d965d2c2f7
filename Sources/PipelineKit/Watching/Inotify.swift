import Foundation

/// A Linux inotify instance watching folders, with a pipe to wake its reader from another thread.
///
/// Every method belongs to the one thread that reads events; `wakePipe` wakes it from others.
final class Inotify {
    /// One event of a watched folder: what happened (`IN_*` bits) to the entry `name` in it.
    struct Event {
        let watch: Int32
        let mask: UInt32
        let name: String

        func has(_ flag: Int32) -> Bool { mask & UInt32(flag) != 0 }
        var isDirectory: Bool { mask & UInt32(IN_ISDIR) != 0 }
    }

    /// What folders report: files finished (closed after writing), renamed in or out, created,
    /// removed, or touched (a new modification time is a new input version).
    static let folderEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_ONLYDIR)

    private let descriptor: Int32
    /// Shared with whoever may wake the reader; its descriptors live as long as the last owner.
    let wakePipe: WakePipe

    /// An instance watching folders; or, with `watching` false, none, whose reader only ever
    /// wakes (a negative descriptor is one `poll` passes over).
    init(watching: Bool = true) throws(WatchError) {
        wakePipe = try WakePipe()
        guard watching else {
            descriptor = -1
            return
        }
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            let code = errno
            // EMFILE is also the user's inotify instances all in use, which `ulimit -n` does not raise.
            let reason =
                code == EMFILE && !OpenFileLimit.isReached
                ? "the user's inotify instances are all in use (the limit fs.inotify.max_user_instances is reached)"
                : String(cString: strerror(code))
            throw WatchError("cannot start inotify: \(reason)")
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether folders are watched: false for an instance made with `watching` false.
    var isWatching: Bool { descriptor >= 0 }

    /// Starts watching the folder at `path`; the watch's number, or the reason it failed.
    func add(_ path: String) -> Result<Int32, WatchError> {
        let watch = inotify_add_watch(descriptor, path, Self.folderEvents)
        guard watch >= 0 else {
            let hint = errno == ENOSPC ? " (the limit fs.inotify.max_user_watches is reached)" : ""
            return .failure(WatchError("cannot watch \(path): \(String(cString: strerror(errno)))\(hint)"))
        }
        return .success(watch)
    }

    func remove(_ watch: Int32) {
        inotify_rm_watch(descriptor, watch)
    }

    /// Waits up to `timeout` (forever when nil) for events or a wake-up, and returns the events
    /// read; throws when reading fails for good.
    func wait(timeout: Duration?) throws(WatchError) -> [Event] {
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds: Int32 =
            timeout.map { duration in
                let (seconds, attoseconds) = duration.components
                // Rounded up, so a wait never ends just before the time it waits for.
                let total = max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
                return Int32(min(total, Int64(Int32.max)))
            } ?? -1
        let ready = poll(&descriptors, 2, milliseconds)
        if ready < 0 {
            if errno == EINTR { return [] }
            throw WatchError("cannot wait for file events: \(String(cString: strerror(errno)))")
        }
        if descriptors[1].revents != 0 { wakePipe.drain() }
        guard descriptors[0].revents != 0 else { return [] }
        return try read()
    }

    /// Reads every event queued now.
    private func read() throws(WatchError) -> [Event] {
        var events: [Event] = []
        // Room for many events at once; each is 16 bytes and a name of at most NAME_MAX + 1.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return events }
                if errno == EINTR { continue }
                throw WatchError("cannot read file events: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return events }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[]; }
                while offset + 16 <= count {
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = bytes[(offset + 16)..<min(count, offset + 16 + length)]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    events.append(Event(watch: watch, mask: mask, name: name))
                    offset += 16 + length
                }
            }
        }
    }
}

/// A pipe whose only message is "wake up": it makes a `poll` on its read end return.
final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(WatchError) {
        var ends: [Int32] = [0, 0]
        // pipe(2), then the flags: Glibc's module leaves pipe2 out (it needs _GNU_SOURCE).
        guard pipe(&ends) == 0 else { throw WatchError("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Safe from any thread: one byte into the non-blocking pipe (a full pipe already means
    /// "wake up").
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}

/// Why a folder cannot be watched.
public struct WatchError: Error, Sendable, CustomStringConvertible {
    /// What could not be done (a folder to watch, inotify itself) and the system's reason.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
