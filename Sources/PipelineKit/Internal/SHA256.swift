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
