import Foundation

/// A regular file opened for reading without ever blocking on what stands at its path: the open
/// is non-blocking (a FIFO with no writer would otherwise hold the thread in `openat` for ever)
/// and the descriptor's own `fstat`, not the path's, decides whether it is a regular file.
package final class RegularFile {
    let descriptor: Int32
    /// The opened file's status, from the descriptor.
    let status: stat

    /// Why a path could not be opened as a regular file: a sentence about the path.
    struct Failure: Error {
        let reason: String
        let code: Int32?
    }

    /// Opens `path`; a folder, FIFO, device or socket is refused once opened, before any read.
    init(opening path: String) throws(Failure) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw Failure(reason: String(cString: strerror(code)), code: code)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(reason: String(cString: strerror(code)), code: code)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw Failure(reason: "it is \(Self.kind(of: status)), not a regular file", code: nil)
        }
        self.descriptor = descriptor
        self.status = status
    }

    deinit { close(descriptor) }

    /// What a file of this status is, in words: "a folder", "a FIFO (named pipe)", ….
    package static func kind(of status: stat) -> String {
        switch status.st_mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a file"
        }
    }

    /// The bytes of the regular file at `path`, read whole: every file a command reads beside
    /// its inputs (a list, the focus file, a manifest, a report) is read so, as a FIFO standing
    /// at its path must not hold the command for ever.
    static func contents(of path: String) throws(Failure) -> Data {
        let file = try RegularFile(opening: path)
        guard let data = file.readAll() else {
            let code = errno
            throw Failure(reason: String(cString: strerror(code)), code: code)
        }
        return data
    }

    /// The file's bytes from its start to its end; nil with errno set when a read fails.
    func readAll() -> Data? {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        // Bounded by the file's end; a file that keeps growing is read as far as it has grown.
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            guard count > 0 else { return data }
            data.append(contentsOf: chunk[0..<count])
        }
    }
}
