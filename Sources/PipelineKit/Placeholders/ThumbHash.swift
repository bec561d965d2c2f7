import Foundation

/// Evan Wallace's ThumbHash encoder, step for step as evanw/thumbhash's `rgbaToThumbHash`.
///
/// The pixels are composited over their alpha-weighted average colour and split into LPQA
/// channels (luminance, yellow–blue, red–green, alpha); each is projected onto DCT components
/// (L gets up to 7 across the long side, 5 with alpha; P and Q 3×3 triangles; A 5×5), whose
/// DC terms and scales go into a 5-byte header (6 with alpha) and whose AC terms follow as
/// 4-bit nibbles, low nibble first. Arithmetic is in `Double` and rounding is JavaScript's
/// `Math.round` (halves up), as in the reference.
public enum ThumbHash {
    /// The largest width and height the encoder takes, as in the reference.
    public static let maximumSide = 100

    /// Encodes `width`×`height` RGBA pixels (8 bits a channel, not premultiplied, row by row)
    /// into the hash bytes.
    public static func encode(rgba: [UInt8], width: Int, height: Int) throws(PlaceholderError) -> [UInt8] {
        guard (1...maximumSide).contains(width), (1...maximumSide).contains(height) else {
            throw PlaceholderError(
                .thumbhash, .invalidPixels("ThumbHash encodes 1×1 to \(maximumSide)×\(maximumSide) pixels, not \(width)×\(height)"))
        }
        guard rgba.count == width * height * 4 else {
            throw PlaceholderError(.thumbhash, .invalidPixels("\(rgba.count) values do not make \(width)×\(height) RGBA pixels"))
        }
        let count = width * height
        let average = averageColour(rgba, count: count)
        let hasAlpha = average.a < Double(count)
        // Fewer luminance components when alpha needs the room.
        let luminanceLimit = hasAlpha ? 5 : 7
        let longest = Double(max(width, height))
        let lx = max(1, Int(jsRound(Double(luminanceLimit * width) / longest)))
        let ly = max(1, Int(jsRound(Double(luminanceLimit * height) / longest)))

        let (l, p, q, a) = lpqa(rgba, count: count, over: average)
        let channel = Channel(width: width, height: height)
        let luminance = channel.encode(l, nx: max(lx, 3), ny: max(ly, 3))
        let yellowBlue = channel.encode(p, nx: 3, ny: 3)
        let redGreen = channel.encode(q, nx: 3, ny: 3)
        let transparency = hasAlpha ? channel.encode(a, nx: 5, ny: 5) : nil
        return packed(
            luminance: luminance, yellowBlue: yellowBlue, redGreen: redGreen, transparency: transparency,
            isLandscape: width > height, lx: lx, ly: ly)
    }

    /// The average colour of the pixels, weighted by alpha, and the sum of their alphas.
    private static func averageColour(_ rgba: [UInt8], count: Int) -> (r: Double, g: Double, b: Double, a: Double) {
        var (averageR, averageG, averageB, averageA) = (0.0, 0.0, 0.0, 0.0)
        for i in 0..<count {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            averageR += alpha / 255 * Double(rgba[i * 4])
            averageG += alpha / 255 * Double(rgba[i * 4 + 1])
            averageB += alpha / 255 * Double(rgba[i * 4 + 2])
            averageA += alpha
        }
        if averageA > 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }
        return (averageR, averageG, averageB, averageA)
    }

    /// The LPQA channels, each pixel composited over the average colour.
    private static func lpqa(
        _ rgba: [UInt8], count: Int, over average: (r: Double, g: Double, b: Double, a: Double)
    ) -> (l: [Double], p: [Double], q: [Double], a: [Double]) {
        var l = [Double](), p = [Double](), q = [Double](), a = [Double]()
        l.reserveCapacity(count); p.reserveCapacity(count); q.reserveCapacity(count); a.reserveCapacity(count)
        for i in 0..<count {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let r = average.r * (1 - alpha) + alpha / 255 * Double(rgba[i * 4])
            let g = average.g * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 1])
            let b = average.b * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }
        return (l, p, q, a)
    }

    /// The hash bytes: the header (the alpha byte when there is `transparency`), then the AC
    /// terms as nibbles.
    private static func packed(
        luminance: Channel.Encoded, yellowBlue: Channel.Encoded, redGreen: Channel.Encoded, transparency: Channel.Encoded?,
        isLandscape: Bool, lx: Int, ly: Int
    ) -> [UInt8] {
        let hasAlpha = transparency != nil
        let header24 =
            jsRoundInt(63 * luminance.dc)
            | jsRoundInt(31.5 + 31.5 * yellowBlue.dc) << 6
            | jsRoundInt(31.5 + 31.5 * redGreen.dc) << 12
            | jsRoundInt(31 * luminance.scale) << 18
            | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx)
            | jsRoundInt(63 * yellowBlue.scale) << 3
            | jsRoundInt(63 * redGreen.scale) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(truncatingIfNeeded: header24), UInt8(truncatingIfNeeded: header24 >> 8), UInt8(truncatingIfNeeded: header24 >> 16),
            UInt8(truncatingIfNeeded: header16), UInt8(truncatingIfNeeded: header16 >> 8),
        ]
        if let transparency {
            hash.append(UInt8(truncatingIfNeeded: jsRoundInt(15 * transparency.dc) | jsRoundInt(15 * transparency.scale) << 4))
        }
        // The AC terms as nibbles, two a byte, low nibble first.
        let terms = luminance.ac + yellowBlue.ac + redGreen.ac + (transparency?.ac ?? [])
        for (index, term) in terms.enumerated() {
            let nibble = UInt8(truncatingIfNeeded: jsRoundInt(15 * term))
            if index % 2 == 0 {
                hash.append(nibble)
            } else {
                hash[hash.count - 1] |= nibble << 4
            }
        }
        return hash
    }

    /// The DCT of one channel of a `width`×`height` image.
    private struct Channel {
        struct Encoded {
            var dc: Double
            /// AC terms mapped to 0–1 by `scale`.
            var ac: [Double]
            /// The largest AC magnitude.
            var scale: Double
        }

        let width: Int
        let height: Int

        /// The components with `cx·ny < nx·(ny − cy)`: a triangle, row by row.
        func encode(_ values: [Double], nx: Int, ny: Int) -> Encoded {
            var result = Encoded(dc: 0, ac: [], scale: 0)
            var fx = [Double](repeating: 0, count: width)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<width {
                        fx[x] = cos(Double.pi / Double(width) * Double(cx) * (Double(x) + 0.5))
                    }
                    for y in 0..<height {
                        let fy = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<width {
                            f += values[x + y * width] * fx[x] * fy
                        }
                    }
                    f /= Double(width * height)
                    if cx > 0 || cy > 0 {
                        result.ac.append(f)
                        result.scale = max(result.scale, abs(f))
                    } else {
                        result.dc = f
                    }
                    cx += 1
                }
            }
            if result.scale > 0 {
                result.ac = result.ac.map { 0.5 + 0.5 / result.scale * $0 }
            }
            return result
        }
    }
}

/// JavaScript's `Math.round`: the nearest integer, halves towards +∞.
private func jsRound(_ value: Double) -> Double {
    let floor = value.rounded(.down)
    return value - floor >= 0.5 ? floor + 1 : floor
}

private func jsRoundInt(_ value: Double) -> Int {
    Int(jsRound(value))
}
