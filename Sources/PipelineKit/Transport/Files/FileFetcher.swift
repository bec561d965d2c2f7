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
            // Named by the path the user gave, and by the target when that is a link: a link to
            // /dev/zero is this input, and is not /dev/zero's.
            let target = Self.linkTarget(input.path).map { " (a symbolic link to \($0))" } ?? ""
            throw ItemError(
                .unreadable, stage: .fetch,
                reason: "\(input.path)\(target) is \(RegularFile.kind(of: info)), not a regular file")
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
        let stamp = FileStamp(info)
        return FetchedSource(source: .file(path: input.path, byteCount: size, version: stamp), version: stamp?.version)
    }

    /// Where the symbolic link at `path` leads, as it is written; nil when `path` is no link.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
