import Foundation

/// An input's encoded bytes, as the fetch stage hands them on: a local file is left where it
/// is (libvips reads it directly, without a copy in memory); fetched bytes are held in memory.
enum EncodedSource: Sendable {
    case file(path: String, byteCount: Int64)
    case data(Data)
}
