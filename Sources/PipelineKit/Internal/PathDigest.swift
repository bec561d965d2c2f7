import CVips
import Foundation

/// A path (or any text) as 128 bits of its SHA-256: what planning keeps of each path it must
/// tell apart from the others, so that a plan of a million inputs holds a few bytes for each
/// path and reads a path back from disk only when it has something to say about it. Two texts
/// differing in any byte have different digests for any purpose short of an attack on SHA-256.
struct PathDigest: Hashable, Sendable {
    private let high: UInt64
    private let low: UInt64

    /// The digest of `text`'s UTF-8 bytes.
    init(_ text: String) {
        var text = text
        var digest = [UInt8](repeating: 0, count: 32)
        text.withUTF8 { bytes in
            guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return }
            defer { g_checksum_free(checksum) }
            if let base = bytes.baseAddress, bytes.count > 0 { g_checksum_update(checksum, base, gssize(bytes.count)) }
            var length = gsize(digest.count)
            digest.withUnsafeMutableBufferPointer { g_checksum_get_digest(checksum, $0.baseAddress, &length) }
        }
        high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The digest of `path` as the disk tells paths apart: byte for byte.
    init(_ path: DiskPath) { self.init(path.path) }

    /// Its 16 bytes, for a file that keeps digests.
    var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The digest whose 16 `bytes` these are.
    init(bytes: some Collection<UInt8>) {
        high = bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes.dropFirst(8).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
