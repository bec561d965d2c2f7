import Foundation

/// The fetch stage for local files: checks that the input is a readable regular file within
/// `maxBytes`, without reading it (the decoder reads it directly, and holds it to the version
/// seen here: `ImageDecoder.pinned`).
struct FileFetcher: Sendable {
    let maxBytes: Int64

    func fetch(_ input: InputFile) throws(ItemError) -> FetchedSource {
        var info = stat()
        guard stat(input.path, &info) == 0 else {
            throw ItemError.system(.unreadable, stage: .fetch, "cannot read \(input.path)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ItemError(.unreadable, stage: .fetch, reason: "\(input.path) is not a regular file")
        }
        guard access(input.path, R_OK) == 0 else {
            throw ItemError.system(.unreadable, stage: .fetch, "cannot read \(input.path)")
        }
        let size = Int64(info.st_size)
        guard size <= maxBytes else {
            throw ItemError(.tooLarge, stage: .fetch, reason: "the file is \(size) bytes, more than fetch.maxBytes (\(maxBytes))")
        }
        guard size > 0 else {
            throw ItemError(.unreadable, stage: .fetch, reason: "the file is empty")
        }
        // Size, modification time and inode change when the bytes do (as make and rsync assume),
        // and are known without reading the file: a re-run stays cheap.
        let version = "file:\(size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ino)"
        return FetchedSource(source: .file(path: input.path, byteCount: size, version: FileVersion(info)), version: version)
    }
}
