import Foundation

extension SSIMULACRA2 {
    /// Three planes of floats (an image's channels), each row by row, in one buffer: the metric
    /// works on these rather than on libvips images, so that each scale is one pass per step
    /// over memory instead of a chain of operations computed and stored several times over.
    struct Planes: Sendable {
        let width: Int
        let height: Int
        /// Plane 0, then 1, then 2, each `width × height` values.
        var values: [Float]

        var pixels: Int { width * height }

        init(width: Int, height: Int) {
            self.width = width
            self.height = height
            values = [Float](repeating: 0, count: 3 * width * height)
        }
    }

    /// The sRGB transfer curve, undone, for one stored value as a fraction 0…1.
    static func linearised(_ value: Double) -> Double {
        value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// The colour of `image` as linear RGB floats 0…1, laid over `background` (a grey as
    /// stored, 0…1) where the image has alpha, as the reference blends before linearising.
    /// Greyscale gives three equal planes.
    static func linearRGB(_ image: VipsImage, background: Double) throws(VipsError) -> Planes {
        var source = image
        let known: [VipsImage.Interpretation] = [.sRGB, .rgb16, .blackAndWhite, .grey16]
        if !known.contains(source.interpretation) || !(source.bandFormat == .uchar || source.bandFormat == .ushort) {
            source = try source.inEightBits()
        }
        let wide = source.bandFormat == .ushort
        let bands = source.bands
        let colourBands = min(3, source.colourBands)
        let alpha = source.hasAlpha ? bands - 1 : nil
        var planes = Planes(width: source.width, height: source.height)
        let pixels = planes.pixels
        // Every stored value's linear light, looked up rather than raised to a power per pixel.
        let levels = wide ? 65536 : 256
        let table = (0..<levels).map { Float(linearised(Double($0) / Double(levels - 1))) }
        let filled: Bool = try source.withMemory { memory in
            let expected = pixels * bands * (wide ? 2 : 1)
            guard memory.count >= expected else { return false }
            planes.values.withUnsafeMutableBufferPointer { out in
                table.withUnsafeBufferPointer { table in
                    func fill<Sample: FixedWidthInteger>(_ samples: UnsafeBufferPointer<Sample>) {
                        let scale = 1 / Double(levels - 1)
                        for pixel in 0..<pixels {
                            let base = pixel * bands
                            for channel in 0..<3 {
                                let stored = samples[base + min(channel, colourBands - 1)]
                                guard let alpha else {
                                    out[channel * pixels + pixel] = table[Int(stored)]
                                    continue
                                }
                                // c·a + bg·(1 − a), then linearised.
                                let a = Double(samples[base + alpha]) * scale
                                let blended = (Double(stored) * scale - background) * a + background
                                out[channel * pixels + pixel] = Float(linearised(blended))
                            }
                        }
                    }
                    if wide {
                        fill(memory.bindMemory(to: UInt16.self))
                    } else {
                        fill(memory.bindMemory(to: UInt8.self))
                    }
                }
            }
            return true
        }
        guard filled else {
            throw VipsError(operation: "ssimulacra2", message: "the image's pixels are fewer than its size says")
        }
        return planes
    }

    /// Halves linear planes by 2×2 means, repeating the last row or column of an odd side.
    static func halved(_ planes: Planes) -> Planes {
        let (width, height) = (planes.width, planes.height)
        var out = Planes(width: (width + 1) / 2, height: (height + 1) / 2)
        let (outWidth, outHeight) = (out.width, out.height)
        planes.values.withUnsafeBufferPointer { source in
            out.values.withUnsafeMutableBufferPointer { target in
                for plane in 0..<3 {
                    let from = source.baseAddress! + plane * width * height
                    let to = target.baseAddress! + plane * outWidth * outHeight
                    for y in 0..<outHeight {
                        let top = from + 2 * y * width
                        let bottom = from + min(2 * y + 1, height - 1) * width
                        let row = to + y * outWidth
                        for x in 0..<outWidth {
                            let left = 2 * x
                            let right = min(left + 1, width - 1)
                            row[x] = (top[left] + top[right] + bottom[left] + bottom[right]) * 0.25
                        }
                    }
                }
            }
        }
        return out
    }

    /// Linear RGB to XYB, already moved into the reference's positive range
    /// (X·14 + 0.42, Y + 0.01, B − Y + 0.55).
    static func xyb(_ linear: Planes) -> Planes {
        var out = Planes(width: linear.width, height: linear.height)
        let pixels = linear.pixels
        let m = opsin.map { $0.map(Float.init) }
        let (lr, lg, lb) = (m[0][0], m[0][1], m[0][2])
        let (mr, mg, mb) = (m[1][0], m[1][1], m[1][2])
        let (sr, sg, sb) = (m[2][0], m[2][1], m[2][2])
        let bias = Float(opsinBias)
        let cubeRootBias = Float(cbrt(opsinBias))
        linear.values.withUnsafeBufferPointer { source in
            out.values.withUnsafeMutableBufferPointer { target in
                for pixel in 0..<pixels {
                    let r = source[pixel]
                    let g = source[pixels + pixel]
                    let b = source[2 * pixels + pixel]
                    // Linear RGB 0…1 with a positive matrix and bias never mixes below zero, so
                    // the reference's clamp at zero has nothing to do here.
                    let l = cubeRoot(lr * r + lg * g + lb * b + bias)
                    let mm = cubeRoot(mr * r + mg * g + mb * b + bias)
                    let s = cubeRoot(sr * r + sg * g + sb * b + bias)
                    // X = (L − M)/2, Y = (L + M)/2, B = S, with L, M, S less the cube root of
                    // the bias, folded together with the shift into the positive range.
                    target[pixel] = 7 * (l - mm) + 0.42
                    target[pixels + pixel] = 0.5 * (l + mm) + (0.01 - cubeRootBias)
                    target[2 * pixels + pixel] = s - 0.5 * (l + mm) + 0.55
                }
            }
        }
        return out
    }

    /// The cube root of a positive float: an estimate from the exponent's bits, then two
    /// Halley steps (each triples the correct digits), which vectorises where the C library's
    /// `cbrtf` is a call per value.
    @inline(__always)
    static func cubeRoot(_ x: Float) -> Float {
        var y = Float(bitPattern: x.bitPattern / 3 &+ 709_921_077)
        for _ in 0..<2 {
            let cube = y * y * y
            y = y * (cube + 2 * x) / (2 * cube + x)
        }
        return y
    }

    /// The blur's taps as floats.
    static let floatKernel: [Float] = kernel.map(Float.init)

    /// Blurs one plane of `width × height` floats by `kernel` into `target`, with zeros beyond
    /// the edges as the reference's filter has; `scratch` holds the horizontal pass.
    static func blur(
        _ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
        width: Int, height: Int
    ) {
        floatKernel.withUnsafeBufferPointer { taps in
            let reach = taps.count / 2
            for y in 0..<height {
                let from = source + y * width
                let row = scratch + y * width
                row.update(repeating: 0, count: width)
                for tap in 0..<taps.count {
                    let offset = tap - reach
                    let weight = taps[tap]
                    let start = max(0, -offset)
                    let end = min(width, width - offset)
                    if start >= end { continue }
                    for x in start..<end { row[x] += weight * from[x + offset] }
                }
            }
            for y in 0..<height {
                let row = target + y * width
                row.update(repeating: 0, count: width)
                for tap in 0..<taps.count {
                    let line = y + tap - reach
                    guard line >= 0, line < height else { continue }
                    let weight = taps[tap]
                    let from = scratch + line * width
                    for x in 0..<width { row[x] += weight * from[x] }
                }
            }
        }
    }

    /// One scale of the original: its XYB planes, their blurred means and blurred squares.
    struct Level: Sendable {
        let xyb: Planes
        let mean: Planes
        let square: Planes

        init(linear: Planes) {
            xyb = SSIMULACRA2.xyb(linear)
            var mean = Planes(width: linear.width, height: linear.height)
            var square = mean
            let pixels = linear.pixels
            var product = [Float](repeating: 0, count: pixels)
            var scratch = [Float](repeating: 0, count: pixels)
            xyb.values.withUnsafeBufferPointer { xyb in
                mean.values.withUnsafeMutableBufferPointer { mean in
                    square.values.withUnsafeMutableBufferPointer { square in
                        product.withUnsafeMutableBufferPointer { product in
                            scratch.withUnsafeMutableBufferPointer { scratch in
                                for plane in 0..<3 {
                                    let at = plane * pixels
                                    let x = xyb.baseAddress! + at
                                    SSIMULACRA2.blur(
                                        x, into: mean.baseAddress! + at, scratch: scratch.baseAddress!, width: linear.width,
                                        height: linear.height)
                                    for i in 0..<pixels { product[i] = x[i] * x[i] }
                                    SSIMULACRA2.blur(
                                        product.baseAddress!, into: square.baseAddress! + at, scratch: scratch.baseAddress!,
                                        width: linear.width, height: linear.height)
                                }
                            }
                        }
                    }
                }
            }
            self.mean = mean
            self.square = square
        }

        /// This scale's 18 norms of `distorted` (its linear planes at this scale): for SSIM,
        /// artifacts and lost detail in turn, for X, Y and B, the mean and the 4-norm.
        func norms(of distorted: Planes) -> [Double] {
            let (width, height) = (distorted.width, distorted.height)
            let pixels = distorted.pixels
            let xyb2 = SSIMULACRA2.xyb(distorted)
            var mu2 = [Float](repeating: 0, count: pixels)
            var sigma22 = mu2
            var sigma12 = mu2
            var product = mu2
            var scratch = mu2
            // Per map and plane: the sum and the sum of fourth powers.
            var sums = [Double](repeating: 0, count: 18)
            xyb.values.withUnsafeBufferPointer { xyb1 in
                mean.values.withUnsafeBufferPointer { mean1 in
                    square.values.withUnsafeBufferPointer { square1 in
                        xyb2.values.withUnsafeBufferPointer { xyb2 in
                            mu2.withUnsafeMutableBufferPointer { mu2 in
                                sigma22.withUnsafeMutableBufferPointer { sigma22 in
                                    sigma12.withUnsafeMutableBufferPointer { sigma12 in
                                        product.withUnsafeMutableBufferPointer { product in
                                            scratch.withUnsafeMutableBufferPointer { scratch in
                                                for plane in 0..<3 {
                                                    let at = plane * pixels
                                                    let x1 = xyb1.baseAddress! + at
                                                    let x2 = xyb2.baseAddress! + at
                                                    let m1 = mean1.baseAddress! + at
                                                    let s11 = square1.baseAddress! + at
                                                    let m2 = mu2.baseAddress!
                                                    let s22 = sigma22.baseAddress!
                                                    let s12 = sigma12.baseAddress!
                                                    let p = product.baseAddress!
                                                    let t = scratch.baseAddress!
                                                    SSIMULACRA2.blur(x2, into: m2, scratch: t, width: width, height: height)
                                                    for i in 0..<pixels { p[i] = x2[i] * x2[i] }
                                                    SSIMULACRA2.blur(p, into: s22, scratch: t, width: width, height: height)
                                                    for i in 0..<pixels { p[i] = x1[i] * x2[i] }
                                                    SSIMULACRA2.blur(p, into: s12, scratch: t, width: width, height: height)
                                                    let found = Self.sums(
                                                        x1: x1, m1: m1, s11: s11, x2: x2, m2: m2, s22: s22, s12: s12, width: width,
                                                        height: height)
                                                    for map in 0..<3 {
                                                        sums[map * 6 + plane * 2] = found[map * 2]
                                                        sums[map * 6 + plane * 2 + 1] = found[map * 2 + 1]
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let count = Double(pixels)
            var norms: [Double] = []
            for index in stride(from: 0, to: 18, by: 2) {
                norms.append(sums[index] / count)
                norms.append((sums[index + 1] / count).squareRoot().squareRoot())
            }
            return norms
        }

        /// For one plane, the sums of the SSIM error map, the artifacts map and the lost-detail
        /// map, each followed by the sum of its fourth powers.
        private static func sums(
            x1: UnsafePointer<Float>, m1: UnsafePointer<Float>, s11: UnsafePointer<Float>,
            x2: UnsafePointer<Float>, m2: UnsafePointer<Float>, s22: UnsafePointer<Float>, s12: UnsafePointer<Float>,
            width: Int, height: Int
        ) -> [Double] {
            let c2: Float = 0.0009
            var totals = [Double](repeating: 0, count: 6)
            for y in 0..<height {
                // A row's sums in floats, which vectorise, then added up in doubles.
                var row: (Float, Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0, 0)
                for i in (y * width)..<((y + 1) * width) {
                    let mu1 = m1[i]
                    let mu2 = m2[i]
                    // SSIM without the luminance denominator: the planes are already perceptual.
                    let difference = mu1 - mu2
                    let meanTerm = 1 - difference * difference
                    let structure = 2 * (s12[i] - mu1 * mu2) + c2
                    let spread = (s11[i] - mu1 * mu1) + (s22[i] - mu2 * mu2) + c2
                    let ssim = max(1 - meanTerm * structure / spread, 0)
                    // Above zero: the distorted image has an edge where the original is smooth
                    // (ringing, blocking, banding); below: it is smooth where the original has
                    // an edge (blur).
                    let edges = (abs(x2[i] - mu2) + 1) / (abs(x1[i] - mu1) + 1) - 1
                    let artifacts = max(edges, 0)
                    let lost = max(-edges, 0)
                    let ssim2 = ssim * ssim
                    let artifacts2 = artifacts * artifacts
                    let lost2 = lost * lost
                    row.0 += ssim
                    row.1 += ssim2 * ssim2
                    row.2 += artifacts
                    row.3 += artifacts2 * artifacts2
                    row.4 += lost
                    row.5 += lost2 * lost2
                }
                totals[0] += Double(row.0)
                totals[1] += Double(row.1)
                totals[2] += Double(row.2)
                totals[3] += Double(row.3)
                totals[4] += Double(row.4)
                totals[5] += Double(row.5)
            }
            return totals
        }
    }
}
