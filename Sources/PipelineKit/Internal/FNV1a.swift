import Foundation

/// 64-bit FNV-1a, the package's one hash: fast, stable across runs and machines (unlike
/// `Hasher`), and enough to catch a torn cache entry or to name a file by a key. Not for
/// anything an attacker must not collide.
enum FNV1a {
    static func hash(_ data: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { bytes in
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        return hash
    }

    /// The hash of `text`'s UTF-8 bytes as 16 hexadecimal digits, for file names and fingerprints.
    static func hex(_ text: String) -> String {
        String(format: "%016llx", hash(Data(text.utf8)))
    }
}
