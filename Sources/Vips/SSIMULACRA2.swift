import Foundation

/// The SSIMULACRA 2 perceptual score of a distorted image against its original, as libjxl's
/// `tools/ssimulacra2` defines it: 100 for identical images, about 90 for visually lossless,
/// 70 for high quality, and lower (even negative) for worse.
///
/// Both images are compared in linear light turned into XYB (rescaled to about 0…1), at 6
/// scales from 1:1 to 1:32 (halved in linear RGB); at each scale and for each of X, Y and B an
/// SSIM map (without SSIM's luminance denominator) and two edge maps (edges the distorted image
/// gained, edges it lost) are reduced to their mean and their 4-norm, and those 108 numbers are
/// weighted and mapped onto the score. Images with alpha are laid over a dark and a light grey
/// and the worse score is kept.
///
/// Colour is taken as sRGB (8 or 16 bits, or greyscale), which is what the pipeline encodes.
/// Make one `SSIMULACRA2` per original and score several candidates against it: the original's
/// half of the work is done once.
public struct SSIMULACRA2: Sendable {
    /// The smallest width and height scored, as the reference tool requires.
    public static let minimumSide = 8

    private let width: Int
    private let height: Int
    /// One pyramid per background the original is laid over (one for an opaque image).
    private let pyramids: [Pyramid]

    /// Prepares `original` for scoring: its XYB planes and their blurred statistics at every
    /// scale, in memory.
    public init(original: VipsImage) throws(VipsError) {
        guard original.width >= Self.minimumSide, original.height >= Self.minimumSide else {
            throw VipsError(operation: "ssimulacra2", message: "SSIMULACRA2 needs an image of at least 8×8 pixels")
        }
        width = original.width
        height = original.height
        var pyramids: [Pyramid] = []
        // The reference blends transparent images over these two greys and keeps the worse score.
        for background in original.hasAlpha ? [0.1, 0.9] : [0.5] {
            pyramids.append(try Pyramid(original: original, background: background))
        }
        self.pyramids = pyramids
    }

    /// The score of `distorted` (the same size as the original) against the original.
    public func score(_ distorted: VipsImage) throws(VipsError) -> Double {
        guard distorted.width == width, distorted.height == height else {
            throw VipsError(
                operation: "ssimulacra2",
                message: "SSIMULACRA2 compares images of one size: \(width)×\(height) and \(distorted.width)×\(distorted.height)")
        }
        var worst = Double.infinity
        for pyramid in pyramids {
            worst = min(worst, Self.mapped(try pyramid.norms(of: distorted)))
        }
        return worst
    }

    /// The score of `distorted` against `original`, in one call.
    public static func score(original: VipsImage, distorted: VipsImage) throws(VipsError) -> Double {
        try SSIMULACRA2(original: original).score(distorted)
    }

    // MARK: The original's side

    /// The original at each scale, laid over one background.
    private struct Pyramid: Sendable {
        let background: Double
        let levels: [Level]

        init(original: VipsImage, background: Double) throws(VipsError) {
            self.background = background
            var levels: [Level] = []
            try SSIMULACRA2.forEachScale(of: SSIMULACRA2.linearRGB(original, background: background)) { linear throws(VipsError) in
                levels.append(try Level(linear: linear))
            }
            self.levels = levels
        }

        /// The 108 norms (per plane, per scale present, SSIM and the two edge maps, 1- and
        /// 4-norm) of `distorted` against this original, in the reference's order.
        func norms(of distorted: VipsImage) throws(VipsError) -> [Double] {
            var perScale: [[Double]] = []
            var index = 0
            try SSIMULACRA2.forEachScale(of: SSIMULACRA2.linearRGB(distorted, background: background)) { linear throws(VipsError) in
                guard index < levels.count else { return }
                perScale.append(try levels[index].norms(of: linear))
                index += 1
            }
            // Reference order: plane, then scale, then norm, then map (SSIM, artifacts, lost detail).
            var norms: [Double] = []
            for plane in 0..<3 {
                for scale in perScale {
                    for norm in 0..<2 {
                        for map in 0..<3 { norms.append(scale[(map * 3 + plane) * 2 + norm]) }
                    }
                }
            }
            return norms
        }
    }

    // MARK: Steps

    /// Calls `body` with the linear planes at 1:1, 1:2, … 1:32, stopping once a side of the
    /// scale just scored is under 8 pixels. As in the reference, the test is made before
    /// halving, so the last scale may be smaller than 8: which scales are present decides
    /// which weights each norm takes, so one scale more or less moves every later weight.
    /// Each scale is halved before `body` has it, so that `body` may overwrite it.
    private static func forEachScale(
        of linear: VipsImage, _ body: (VipsImage) throws(VipsError) -> Void
    ) throws(VipsError) {
        var planes: VipsImage? = linear
        for scale in 0..<6 {
            guard let current = planes else { return }
            let hasNext = scale < 5 && current.width >= minimumSide && current.height >= minimumSide
            planes = hasNext ? try halved(current) : nil
            try body(current)
        }
    }

    /// The opsin absorbance matrix and bias of JPEG XL's XYB.
    static let opsin: [[Double]] = [
        [0.30, 0.622, 0.078],
        [0.23, 0.692, 0.078],
        [0.24342268924547819, 0.20476744424496821, 1 - 0.24342268924547819 - 0.20476744424496821],
    ]
    static let opsinBias = 0.0037930732552754493

    /// The reference's recursive Gaussian (σ 1.5, after Charalampidis' truncated cosines) as the
    /// finite kernel it equals: Σₖ βₖ cos(ωₖ·j) for |j| < N.
    static let kernel: [Double] = {
        let sigma = 1.5
        let radius = (3.2795 * sigma + 0.2546).rounded()
        let omega = [1.0, 3, 5].map { $0 * Double.pi / (2 * radius) }
        let p = [1 / tan(omega[0] / 2), -1 / tan(omega[1] / 2), 1 / tan(omega[2] / 2)]
        let r = [p[0] * p[0] / sin(omega[0]), -p[1] * p[1] / sin(omega[1]), p[2] * p[2] / sin(omega[2])]
        let rho = omega.map { exp(-0.5 * sigma * sigma * $0 * $0) / radius }
        let d13 = p[0] * r[1] - r[0] * p[1]
        let zeta15 = (p[1] * r[2] - r[1] * p[2]) / d13
        let zeta35 = (p[2] * r[0] - r[2] * p[0]) / d13
        // Solve [p; r; ζ] β = [1, N² − σ², ζ₁₅ρ₁ + ζ₃₅ρ₃ + ρ₅] by Cramer's rule.
        let a = [p, r, [zeta15, zeta35, 1]]
        let g = [1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]]
        func determinant(_ m: [[Double]]) -> Double {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        }
        let whole = determinant(a)
        let beta = (0..<3).map { column in
            determinant(
                a.enumerated().map { row, values in
                    values.enumerated().map { $0.offset == column ? g[row] : $0.element }
                }) / whole
        }
        let reach = Int(radius) - 1
        return (-reach...reach).map { (j: Int) -> Double in
            (0..<3).reduce(0.0) { (sum: Double, k: Int) -> Double in sum + beta[k] * cos(omega[k] * Double(j)) }
        }
    }()

    /// The weighted sum of the norms, mapped onto the score.
    static func mapped(_ norms: [Double]) -> Double {
        // Weights run over the scales present, so a small image uses the first ones only, as
        // the reference's running index does.
        var sum = 0.0
        for (weight, norm) in zip(weights, norms) { sum += weight * abs(norm) }
        let x = sum * 0.9562382616834844
        let curved = 2.326765642916932 * x - 0.020884521182843837 * x * x + 6.248496625763138e-05 * x * x * x
        return curved > 0 ? 100 - 10 * pow(curved, 0.6276336467831387) : 100
    }

    /// The reference's published weights, by plane (X, Y, B), scale, norm (1, 4) and map.
    private static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0,
        0.0, 0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,
        0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
        0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0,
        0.0007289346991508072, 0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
        0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0,
        0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408,
        0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0,
        0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0,
        95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379,
        0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
    ]
}
