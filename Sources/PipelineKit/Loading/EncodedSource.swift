import Foundation
import Vips

/// An input's encoded bytes, as the fetch stage hands them on: a local file is left where it
/// is (libvips reads it directly, without a copy in memory), with the version the fetch stage
/// saw, which the decoder holds it to (`ImageDecoder.pinned`); fetched bytes are held in memory,
/// in libvips' memory, where the decoder's readers and libvips' loaders read them.
enum EncodedSource: Sendable {
    /// `name`, when set, is the input's own path, and `path` the descriptor's that reads it.
    case file(path: String, byteCount: Int64, version: FileStamp? = nil, name: String? = nil)
    case memory(VipsBytes)

    /// How many encoded bytes there are: the file's size, or the bytes held.
    var byteCount: Int {
        switch self {
        case .file(_, let byteCount, _, _): Int(byteCount)
        case .memory(let bytes): bytes.count
        }
    }
}

/// What the fetch and cache stages hand on: the bytes, and what identifies their version for
/// incremental runs (a file's size, modification time and inode; a response's validator), or
/// nil when nothing does (then the outputs are always made again).
struct FetchedSource: Sendable {
    let source: EncodedSource
    let version: String?
}
