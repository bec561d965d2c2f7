import Foundation

/// Wolt's BlurHash encoder, as woltapp/blurhash's `Algorithm.md` and reference encoders define it.
///
/// The pixels are read as sRGB, turned linear, and projected onto `x`×`y` cosine components;
/// the DC component is stored as an sRGB colour in four base-83 digits, the largest AC magnitude
/// in one digit as `(q + 1) / 166`, and each AC component in two digits as three values 0–18 of
/// `sign(v)·√|v / max|`. Arithmetic is in `Double`, as the TypeScript and Python encoders do.
public enum BlurHash {
    /// Encodes `width`×`height` interleaved 8-bit pixels with `channels` values each (3 for RGB,
    /// 4 for RGBA, whose alpha is ignored as the reference encoders ignore it).
    public static func encode(
        pixels: [UInt8], width: Int, height: Int, channels: Int,
        xComponents: Int = 4, yComponents: Int = 3
    ) throws(PlaceholderError) -> String {
        let range = PlaceholderSettings.blurhashComponentRange
        try PlaceholderSettings.check("blurhashXComponents", xComponents, in: range, for: .blurhash)
        try PlaceholderSettings.check("blurhashYComponents", yComponents, in: range, for: .blurhash)
        guard channels == 3 || channels == 4 else {
            throw PlaceholderError(.blurhash, .invalidPixels("BlurHash reads 3 or 4 channels a pixel, not \(channels)"))
        }
        guard width > 0, height > 0, pixels.count == width * height * channels else {
            throw PlaceholderError(
                .blurhash, .invalidPixels("\(pixels.count) values do not make \(width)×\(height) pixels of \(channels) channels"))
        }

        // One linear value per channel value, looked up rather than computed per pixel.
        let linear = pixels.map { linearFromSRGB[Int($0)] }
        var factors: [(r: Double, g: Double, b: Double)] = []
        for j in 0..<yComponents {
            for i in 0..<xComponents {
                let normalisation: Double = i == 0 && j == 0 ? 1 : 2
                var (r, g, b) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    let yBasis = cos(Double.pi * Double(j) * Double(y) / Double(height))
                    for x in 0..<width {
                        let basis = normalisation * cos(Double.pi * Double(i) * Double(x) / Double(width)) * yBasis
                        let offset = (y * width + x) * channels
                        r += basis * linear[offset]
                        g += basis * linear[offset + 1]
                        b += basis * linear[offset + 2]
                    }
                }
                let count = Double(width * height)
                factors.append((r / count, g / count, b / count))
            }
        }

        let dc = factors[0]
        let ac = factors.dropFirst()
        var hash = base83(xComponents - 1 + (yComponents - 1) * 9, digits: 1)
        let maximum: Double
        if ac.isEmpty {
            maximum = 1
            hash += base83(0, digits: 1)
        } else {
            let actual = ac.map { max(abs($0.r), abs($0.g), abs($0.b)) }.max() ?? 0
            let quantised = Int(max(0, min(82, (actual * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, digits: 1)
        }
        hash += base83((sRGB(fromLinear: dc.r) << 16) + (sRGB(fromLinear: dc.g) << 8) + sRGB(fromLinear: dc.b), digits: 4)
        for factor in ac {
            let value = quantisedAC(factor.r, maximum) * 19 * 19 + quantisedAC(factor.g, maximum) * 19 + quantisedAC(factor.b, maximum)
            hash += base83(value, digits: 2)
        }
        return hash
    }

    /// An AC value as 0–18, 9 being zero.
    private static func quantisedAC(_ value: Double, _ maximum: Double) -> Int {
        let signed = pow(abs(value / maximum), 0.5).withSign(of: value)
        return Int(max(0, min(18, (signed * 9 + 9.5).rounded(.down))))
    }

    private static let linearFromSRGB: [Double] = (0...255).map { value in
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// A linear value in 0–1 as an 8-bit sRGB value, rounded half up as the reference does.
    private static func sRGB(fromLinear value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    /// `value` in `digits` base-83 digits, most significant first.
    private static func base83(_ value: Int, digits: Int) -> String {
        var divisor = 1
        for _ in 1..<max(digits, 1) { divisor *= 83 }
        var text = ""
        for _ in 0..<digits {
            text.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
        return text
    }
}

extension Double {
    fileprivate func withSign(of other: Double) -> Double {
        Double(signOf: other, magnitudeOf: self)
    }
}
