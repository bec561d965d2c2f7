import Foundation

/// Minimal ICC profiles made byte by byte: a monitor RGB profile with chosen primaries and one
/// tone curve for the three channels, and a grey one, complete enough for Little CMS to
/// transform with.
package enum ICCFixtures {
    /// sRGB's primaries as XYZ adapted to D50.
    package static let srgbPrimaries = [[0.4361, 0.2225, 0.0139], [0.3851, 0.7169, 0.0971], [0.1431, 0.0606, 0.7141]]
    /// Adobe RGB (1998)'s primaries as XYZ adapted to D50.
    package static let adobePrimaries = [[0.6097, 0.3111, 0.0195], [0.2053, 0.6257, 0.0609], [0.1492, 0.0632, 0.7446]]

    /// sRGB's tone curve, encoded value to linear light.
    package static func srgbDecode(_ x: Double) -> Double {
        x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
    }

    /// sRGB's curve as a parametric tag (type 3: gamma, a, b, c, d).
    package static let srgbParametric: [UInt8] = {
        let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        let fixed: [UInt8] = parameters.flatMap { be32(Int(($0 * 65536).rounded())) }
        return Array("para".utf8) + [0, 0, 0, 0, 0, 3, 0, 0] + fixed
    }()

    /// sRGB's curve as a table of 1024 entries, as the classic HP sRGB profile has it.
    package static let srgbTable: [UInt8] = {
        let entries: [UInt8] = (0..<1024).flatMap { index -> [UInt8] in
            let value = Int((srgbDecode(Double(index) / 1023) * 65535).rounded())
            return [UInt8(value >> 8), UInt8(value & 255)]
        }
        return Array("curv".utf8) + [0, 0, 0, 0] + be32(1024) + entries
    }()

    /// A pure gamma curve (8.8 fixed point: 2.2 is about 0x0233).
    package static func gammaCurve(_ gamma: Double) -> [UInt8] {
        let fixed = Int((gamma * 256).rounded())
        return Array("curv".utf8) + [0, 0, 0, 0] + be32(1) + [UInt8(fixed >> 8), UInt8(fixed & 255)]
    }

    /// A version 2.1 display profile: RGB to XYZ, D50 white point, the three primaries and
    /// `curve` for all three channels.
    package static func profile(primaries: [[Double]], curve: [UInt8]) -> [UInt8] {
        let rgb = zip(["rXYZ", "gXYZ", "bXYZ"], primaries.map(xyz)).map { ($0, $1) }
        return assembled(colourSpace: "RGB ", [("wtpt", xyz(d50))] + rgb + [("rTRC", curve), ("gTRC", curve), ("bTRC", curve)])
    }

    /// A version 2.1 grey display profile, as scanners and editors embed ("Gray Gamma 2.2"):
    /// grey to XYZ, D50 white point and `curve`.
    package static func greyProfile(curve: [UInt8]) -> [UInt8] {
        assembled(colourSpace: "GRAY", [("wtpt", xyz(d50)), ("kTRC", curve)])
    }

    /// `profile` with `count` bytes after its tags, its header counting them: well formed, and
    /// holding what no reader reads.
    package static func padded(_ profile: [UInt8], by count: Int) -> [UInt8] {
        var bytes = profile + (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        bytes.replaceSubrange(0..<4, with: be32(bytes.count))
        return bytes
    }

    private static let d50 = [0.9642, 1.0, 0.8249]

    private static func xyz(_ v: [Double]) -> [UInt8] {
        Array("XYZ ".utf8) + [0, 0, 0, 0] + v.flatMap { be32(Int(($0 * 65536).rounded())) }
    }

    /// A profile of `colourSpace` to XYZ with `tags` in order; tags of the same bytes share them.
    private static func assembled(colourSpace: String, _ tags: [(signature: String, body: [UInt8])]) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 128)
        header.replaceSubrange(8..<12, with: [0x02, 0x10, 0, 0])
        header.replaceSubrange(12..<16, with: Array("mntr".utf8))
        header.replaceSubrange(16..<20, with: Array(colourSpace.utf8))
        header.replaceSubrange(20..<24, with: Array("XYZ ".utf8))
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        header.replaceSubrange(68..<80, with: d50.flatMap { be32(Int(($0 * 65536).rounded())) })
        var table = be32(tags.count), data: [UInt8] = [], placed: [[UInt8]: Int] = [:]
        let dataStart = 128 + 4 + tags.count * 12
        for (signature, body) in tags {
            let offset =
                placed[body]
                ?? {
                    let offset = dataStart + data.count
                    data += body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
                    placed[body] = offset
                    return offset
                }()
            table += Array(signature.utf8) + be32(offset) + be32(body.count)
        }
        var bytes = header + table + data
        bytes.replaceSubrange(0..<4, with: be32(bytes.count))
        return bytes
    }

    private static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
}
