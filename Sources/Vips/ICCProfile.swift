import CVips
import Foundation

/// What an embedded ICC profile says about its colour space, read from its bytes: enough to
/// tell sRGB, which needs no conversion to sRGB, from anything else, which does.
public enum ICCProfile {
    /// Whether `bytes` describe sRGB: an RGB profile whose primaries (the D50-adapted `rXYZ`,
    /// `gXYZ` and `bXYZ` tags) are sRGB's within 0.002 and whose three tone curves follow
    /// sRGB's within 0.002 at 33 points (tables, gammas and parametric curves alike).
    /// Converting from such a profile to sRGB changes no colour by more than rounding, and
    /// costs a pass of Little CMS over every pixel; every doubt answers false.
    public static func isSRGB(_ bytes: [UInt8]) -> Bool {
        guard let profile = Parsed(bytes), profile.string(at: 16, count: 4) == "RGB ", profile.string(at: 20, count: 4) == "XYZ " else {
            return false
        }
        for (tag, expected) in zip(["rXYZ", "gXYZ", "bXYZ"], srgbPrimaries) {
            guard let xyz = profile.xyz(tag), zip(xyz, expected).allSatisfy({ abs($0 - $1) <= 0.002 }) else { return false }
        }
        for tag in ["rTRC", "gTRC", "bTRC"] {
            guard let curve = profile.curve(tag) else { return false }
            for step in 0...32 {
                let x = Double(step) / 32
                guard abs(curve(x) - srgbDecode(x)) <= 0.002 else { return false }
            }
        }
        return true
    }

    /// Whether `bytes` hold a profile and nothing else: as long as its header says, each byte
    /// in its header, its tag table or a tag (padded to 4 bytes, as writers align the next),
    /// and at most `plainMaximum` in all. Bytes outside the tags are read by nobody, and may
    /// hide anything; a length the header does not give is read differently by each format's
    /// writer (one copies it, another drops it).
    public static func isPlain(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= plainMaximum, bytes.storedInteger(at: 0) == bytes.count, let profile = Parsed(bytes),
            let count = bytes.storedInteger(at: 128)
        else { return false }
        let table = 0..<(132 + count * 12)
        let tags = profile.tags.values.map { $0.offset..<min(bytes.count, ($0.offset + $0.size + 3) / 4 * 4) }
        // Tags may share their bytes, and lie in any order.
        var (covered, reached) = (0, 0)
        for range in ([table] + tags).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            covered += max(0, range.upperBound - max(range.lowerBound, reached))
            reached = max(reached, range.upperBound)
        }
        return covered == bytes.count
    }

    /// The largest profile kept as it is: above the largest sRGB profiles in use (the ICC's
    /// v4 preference profile, with its tables, is 60 KB), far below a profile made to bloat.
    public static let plainMaximum = 128 << 10

    /// sRGB's red, green and blue primaries as XYZ, adapted to D50 (ICC's connection space).
    static let srgbPrimaries: [[Double]] = [[0.4361, 0.2225, 0.0139], [0.3851, 0.7169, 0.0971], [0.1431, 0.0606, 0.7141]]

    /// sRGB's tone curve, from encoded value to linear light, both 0…1.
    static func srgbDecode(_ x: Double) -> Double {
        x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
    }

    /// A profile's bytes with its tag table: every read is bounds-checked.
    private struct Parsed {
        let bytes: [UInt8]
        let tags: [String: (offset: Int, size: Int)]

        init?(_ bytes: [UInt8]) {
            self.bytes = bytes
            guard bytes.count >= 132, bytes[36..<40].elementsEqual(Array("acsp".utf8)) else { return nil }
            guard let count = bytes.storedInteger(at: 128), count <= 1000, 132 + count * 12 <= bytes.count else { return nil }
            var tags: [String: (offset: Int, size: Int)] = [:]
            for index in 0..<count {
                let entry = 132 + index * 12
                guard let offset = bytes.storedInteger(at: entry + 4), let size = bytes.storedInteger(at: entry + 8),
                    offset + size <= bytes.count
                else { return nil }
                tags[String(decoding: bytes[entry..<entry + 4], as: UTF8.self)] = (offset, size)
            }
            self.tags = tags
        }

        func string(at offset: Int, count: Int) -> String? {
            offset + count <= bytes.count ? String(decoding: bytes[offset..<offset + count], as: UTF8.self) : nil
        }

        /// A signed 15.16 fixed-point number.
        func s15Fixed16(_ at: Int) -> Double {
            Double(Int32(bitPattern: UInt32(bytes.storedInteger(at: at) ?? 0))) / 65536
        }

        func xyz(_ signature: String) -> [Double]? {
            guard let tag = tags[signature], tag.size >= 20, string(at: tag.offset, count: 4) == "XYZ " else { return nil }
            return (0..<3).map { s15Fixed16(tag.offset + 8 + $0 * 4) }
        }

        /// The tone curve of a `curv` (identity, gamma or table) or `para` (types 0–4) tag.
        func curve(_ signature: String) -> ((Double) -> Double)? {
            guard let tag = tags[signature], tag.size >= 12 else { return nil }
            let start = tag.offset
            switch string(at: start, count: 4) {
            case "curv":
                guard let count = bytes.storedInteger(at: start + 8), tag.size >= 12 + count * 2 else { return nil }
                if count == 0 { return { $0 } }
                if count == 1 {
                    let gamma = Double(bytes.storedInteger(at: start + 12, count: 2) ?? 0) / 256
                    return { pow($0, gamma) }
                }
                let table = (0..<count).map { Double(bytes.storedInteger(at: start + 12 + $0 * 2, count: 2) ?? 0) / 65535 }
                return { x in
                    let position = x * Double(count - 1)
                    let below = min(count - 2, Int(position))
                    return table[below] + (table[below + 1] - table[below]) * (position - Double(below))
                }
            case "para":
                guard let type = bytes.storedInteger(at: start + 8, count: 2) else { return nil }
                let counts = [1, 3, 4, 5, 7]
                guard type < counts.count, tag.size >= 12 + counts[type] * 4 else { return nil }
                let p = (0..<counts[type]).map { s15Fixed16(start + 12 + $0 * 4) }
                switch type {
                case 0: return { pow($0, p[0]) }
                case 1: return { $0 >= -p[2] / p[1] ? pow(p[1] * $0 + p[2], p[0]) : 0 }
                case 2: return { $0 >= -p[2] / p[1] ? pow(p[1] * $0 + p[2], p[0]) + p[3] : p[3] }
                case 3: return { $0 >= p[4] ? pow(p[1] * $0 + p[2], p[0]) : p[3] * $0 }
                default: return { $0 >= p[4] ? pow(p[1] * $0 + p[2], p[0]) + p[5] : p[3] * $0 + p[6] }
                }
            default:
                return nil
            }
        }
    }
}

extension VipsImage {
    /// The embedded ICC profile's bytes, or nil when the image has none.
    public var iccProfileBytes: [UInt8]? {
        guard hasICCProfile, let bytes = blobBytes("icc-profile-data"), !bytes.isEmpty else { return nil }
        return withExtendedLifetime(self) { [UInt8](bytes) }
    }

    /// Whether the embedded ICC profile is sRGB (`ICCProfile.isSRGB`).
    public var hasSRGBProfile: Bool {
        iccProfileBytes.map(ICCProfile.isSRGB) ?? false
    }

    /// Whether the embedded ICC profile is sRGB and plain (`ICCProfile.isPlain`): one an output
    /// may keep as the input has it.
    public var hasPlainSRGBProfile: Bool {
        iccProfileBytes.map { ICCProfile.isPlain($0) && ICCProfile.isSRGB($0) } ?? false
    }
}
