import CVips
import Foundation

/// SHA-256 through GLib's `GChecksum` and `GHmac`: libvips already links GLib, so S3's payload
/// hashes and the server's signed URLs need no new library.
package enum SHA256 {
    /// The lowercase hex digest of `data`.
    package static func hex(_ data: Data) -> String {
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return "" }
        defer { g_checksum_free(checksum) }
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 {
                g_checksum_update(checksum, base.assumingMemoryBound(to: guchar.self), gssize(bytes.count))
            }
        }
        return String(cString: g_checksum_get_string(checksum))
    }

    /// The lowercase hex digest of the first `byteCount` bytes of the file open at
    /// `descriptor`, read a piece at a time so that a large file is never held whole; nil when
    /// it has fewer or cannot be read. Blocks on the disk.
    package static func hex(ofFile descriptor: Int32, byteCount: Int) -> String? {
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return nil }
        defer { g_checksum_free(checksum) }
        var piece = [UInt8](repeating: 0, count: max(1, min(byteCount, 1 << 20)))
        var done = 0
        // Bounded: each read either advances or ends the loop.
        while done < byteCount {
            let count = piece.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, min($0.count, byteCount - done), off_t(done)) }
            guard count > 0 else { return nil }
            piece.withUnsafeBufferPointer { g_checksum_update(checksum, $0.baseAddress, gssize(count)) }
            done += count
        }
        return String(cString: g_checksum_get_string(checksum))
    }

    /// The HMAC-SHA256 of `message` under `key`: 32 bytes.
    package static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let hmac = key.withUnsafeBufferPointer { key in g_hmac_new(G_CHECKSUM_SHA256, key.baseAddress, gsize(key.count)) }
        guard let hmac else { return [] }
        defer { g_hmac_unref(hmac) }
        message.withUnsafeBufferPointer { message in
            if let base = message.baseAddress, message.count > 0 { g_hmac_update(hmac, base, gssize(message.count)) }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        var length = gsize(digest.count)
        digest.withUnsafeMutableBufferPointer { g_hmac_get_digest(hmac, $0.baseAddress, &length) }
        return Array(digest.prefix(Int(length)))
    }

    /// The digest of no bytes, which every bodiless S3 request sends.
    static let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}
