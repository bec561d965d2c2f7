import CVips
import Foundation

/// SHA-256 through GLib's `GChecksum`: libvips already links GLib, so S3's payload hashes need
/// no new library.
enum SHA256 {
    /// The lowercase hex digest of `data`.
    static func hex(_ data: Data) -> String {
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return "" }
        defer { g_checksum_free(checksum) }
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 {
                g_checksum_update(checksum, base.assumingMemoryBound(to: guchar.self), gssize(bytes.count))
            }
        }
        return String(cString: g_checksum_get_string(checksum))
    }

    /// The digest of no bytes, which every bodiless S3 request sends.
    static let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}
