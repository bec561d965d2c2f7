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

    /// The original at each scale: its XYB image and its blurred mean and blurred square.
    private struct Pyramid: Sendable {
        let background: Double
        let levels: [(xyb: VipsImage, blurred: VipsImage)]

        init(original: VipsImage, background: Double) throws(VipsError) {
            self.background = background
            var levels: [(xyb: VipsImage, blurred: VipsImage)] = []
            try SSIMULACRA2.forEachScale(of: try SSIMULACRA2.linearRGB(original, background: background)) { linear throws(VipsError) in
                let xyb = try SSIMULACRA2.xyb(linear).rendered()
                let blurred = try SSIMULACRA2.blurred(try xyb.joiningBands(try xyb.times(xyb))).rendered()
                levels.append((xyb, blurred))
            }
            self.levels = levels
        }

        /// The 108 norms (per plane, per scale present, SSIM and the two edge maps, 1- and
        /// 4-norm) of `distorted` against this original, in the reference's order.
        func norms(of distorted: VipsImage) throws(VipsError) -> [Double] {
            var perScale: [[Double]] = []
            var index = 0
            try SSIMULACRA2.forEachScale(of: try SSIMULACRA2.linearRGB(distorted, background: background)) { linear throws(VipsError) in
                guard index < levels.count else { return }
                let (xyb1, blurred1) = levels[index]
                index += 1
                let xyb2 = try SSIMULACRA2.xyb(linear).rendered()
                let blurred2 = try SSIMULACRA2.blurred(try Vips.bandjoin([xyb2, try xyb2.times(xyb2), try xyb1.times(xyb2)])).rendered()
                perScale.append(try SSIMULACRA2.scaleNorms(xyb1: xyb1, blurred1: blurred1, xyb2: xyb2, blurred2: blurred2))
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

    /// Calls `body` with the linear image at 1:1, 1:2, … 1:32, stopping once a side of the
    /// scale just scored is under 8 pixels. As in the reference, the test is made before
    /// halving, so the last scale may be smaller than 8: which scales are present decides
    /// which weights each norm takes, so one scale more or less moves every later weight.
    private static func forEachScale(
        of linear: VipsImage,
        _ body: (VipsImage) throws(VipsError) -> Void
    ) throws(VipsError) {
        var image = try linear.rendered()
        for scale in 0..<6 {
            if image.width < minimumSide || image.height < minimumSide { return }
            if scale > 0 { image = try halved(image) }
            try body(image)
        }
    }

    /// The colour as linear RGB floats 0…1 (three bands), laid over `background` (a grey as
    /// stored, 0…1) where the image has alpha, as the reference blends before linearising.
    static func linearRGB(_ image: VipsImage, background: Double) throws(VipsError) -> VipsImage {
        var source = image
        let known: [VipsImage.Interpretation] = [.sRGB, .rgb16, .blackAndWhite, .grey16]
        if !known.contains(source.interpretation) || !(source.bandFormat == .uchar || source.bandFormat == .ushort) {
            source = try source.inEightBits()
        }
        let scale = source.bandFormat == .ushort ? 65535.0 : 255.0
        let colourBands = source.colourBands
        var colour = try source.extractingBands(0, count: colourBands).linear(1 / scale, 0)
        if source.hasAlpha {
            let alpha = try source.extractingBands(source.bands - 1).linear(1 / scale, 0)
            // c·a + bg·(1 − a)
            colour = try colour.minus(background).times(alpha).linear(1, background)
        }
        if colourBands < 3 { colour = try Vips.bandjoin([colour, colour, colour]) }
        // The sRGB transfer curve, undone.
        let low = try colour.linear(1 / 12.92, 0)
        let high = try colour.linear(1 / 1.055, 0.055 / 1.055).applying("math2_const", ["math2": .string("pow"), "c": .numbers([2.4])])
        let isLow = try colour.applying("relational_const", ["relational": .string("lesseq"), "c": .numbers([0.04045])])
        return try Vips.ifThenElse(isLow, low, high)
    }

    /// Halves a linear image by 2×2 means, repeating the last row or column of an odd side.
    private static func halved(_ image: VipsImage) throws(VipsError) -> VipsImage {
        var even = image
        if image.width % 2 == 1 || image.height % 2 == 1 {
            even = try image.applying(
                "embed",
                [
                    "x": .integer(0), "y": .integer(0), "extend": .string("copy"),
                    "width": .integer(image.width + image.width % 2), "height": .integer(image.height + image.height % 2),
                ])
        }
        return try even.applying("shrink", ["hshrink": .number(2), "vshrink": .number(2)]).rendered()
    }

    /// The opsin absorbance matrix and bias of JPEG XL's XYB.
    private static let opsin: [[Double]] = [
        [0.30, 0.622, 0.078],
        [0.23, 0.692, 0.078],
        [0.24342268924547819, 0.20476744424496821, 1 - 0.24342268924547819 - 0.20476744424496821],
    ]
    private static let opsinBias = 0.0037930732552754493

    /// Linear RGB to XYB, already moved into the reference's positive range
    /// (X·14 + 0.42, Y + 0.01, B − Y + 0.55).
    static func xyb(_ linear: VipsImage) throws(VipsError) -> VipsImage {
        // Linear RGB 0…1 with a positive matrix and bias never mixes below zero, so the
        // reference's clamp at zero has nothing to do here.
        let mixed = try linear.applying("recomb", ["m": .image(try VipsImage.matrix(opsin))])
            .linear(1, opsinBias)
            .applying("math2_const", ["math2": .string("pow"), "c": .numbers([1.0 / 3])])
        // X = (L − M)/2, Y = (L + M)/2, B = S, with L, M, S less the cube root of the bias,
        // folded together with the shift into the positive range.
        let bias = cbrt(opsinBias)
        let positive = try mixed.applying("recomb", ["m": .image(try VipsImage.matrix([[7, -7, 0], [0.5, 0.5, 0], [-0.5, -0.5, 1]]))])
        return try positive.linear([1, 1, 1], [0.42, 0.01 - bias, 0.55])
    }

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
        return (-reach...reach).map { j in (0..<3).reduce(0.0) { $0 + beta[$1] * cos(omega[$1] * Double(j)) } }
    }()

    /// Every band blurred by `kernel`, with zeros beyond the edges as the reference's filter has.
    static func blurred(_ image: VipsImage) throws(VipsError) -> VipsImage {
        let reach = kernel.count / 2
        let padded = try image.applying(
            "embed",
            [
                "x": .integer(reach), "y": .integer(reach), "extend": .string("black"),
                "width": .integer(image.width + 2 * reach), "height": .integer(image.height + 2 * reach),
            ])
        let mask = try VipsImage.matrix([kernel])
        let out = try padded.applying("convsep", ["mask": .image(mask), "precision": .string("float")])
        if out.width == image.width { return out }
        return try out.extracted(left: reach, top: reach, width: image.width, height: image.height)
    }

    /// One scale's 18 norms: for SSIM, artifacts and lost detail in turn, for X, Y and B, the
    /// mean and the 4-norm.
    private static func scaleNorms(
        xyb1: VipsImage, blurred1: VipsImage,
        xyb2: VipsImage, blurred2: VipsImage
    ) throws(VipsError) -> [Double] {
        let mu1 = try blurred1.extractingBands(0, count: 3)
        let sigma11 = try blurred1.extractingBands(3, count: 3)
        let mu2 = try blurred2.extractingBands(0, count: 3)
        let sigma22 = try blurred2.extractingBands(3, count: 3)
        let sigma12 = try blurred2.extractingBands(6, count: 3)
        let c2 = 0.0009
        // SSIM without the luminance denominator: the planes are already perceptual.
        let meanTerm = try mu1.minus(mu2).squared().linear(-1, 1)
        let structure = try sigma12.minus(try mu1.times(mu2)).linear(2, c2)
        let spread = try sigma11.minus(try mu1.squared()).plus(try sigma22.minus(try mu2.squared())).linear(1, c2)
        let ssimError = try meanTerm.times(structure).dividedBy(spread).linear(-1, 1).positivePart()
        // Above zero: the distorted image has an edge where the original is smooth (ringing,
        // blocking, banding); below: it is smooth where the original has an edge (blur).
        let edges = try xyb2.minus(mu2).absolute().linear(1, 1)
            .dividedBy(try xyb1.minus(mu1).absolute().linear(1, 1)).linear(1, -1)
        let artifacts = try edges.positivePart()
        let lostDetail = try edges.linear(-1, 0).positivePart()
        let maps = [ssimError, artifacts, lostDetail]
        var bands: [VipsImage] = []
        for map in maps {
            bands.append(map)
            bands.append(try map.squared())
        }
        let statistics = try Vips.bandjoin(bands).applying("stats")
        let pixels = Double(xyb1.width * xyb1.height)
        var norms: [Double] = []
        for map in 0..<3 {
            for plane in 0..<3 {
                // stats: row 1 + band; column 2 the sum, column 3 the sum of squares.
                let sum = try statistics.pixel(x: 2, y: 1 + map * 6 + plane)[0]
                let fourth = try statistics.pixel(x: 3, y: 1 + map * 6 + 3 + plane)[0]
                norms.append(sum / pixels)
                norms.append((fourth / pixels).squareRoot().squareRoot())
            }
        }
        return norms
    }

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

// Float arithmetic between libvips images, as the metric spells it.
extension VipsImage {
    fileprivate func linear(_ a: Double, _ b: Double) throws(VipsError) -> VipsImage {
        try applying("linear", ["a": .numbers([a]), "b": .numbers([b])])
    }

    fileprivate func linear(_ a: [Double], _ b: [Double]) throws(VipsError) -> VipsImage {
        try applying("linear", ["a": .numbers(a), "b": .numbers(b)])
    }

    fileprivate func minus(_ value: Double) throws(VipsError) -> VipsImage { try linear(1, -value) }

    fileprivate func times(_ other: VipsImage) throws(VipsError) -> VipsImage { try Vips.binary("multiply", self, other) }

    fileprivate func minus(_ other: VipsImage) throws(VipsError) -> VipsImage { try Vips.binary("subtract", self, other) }

    fileprivate func plus(_ other: VipsImage) throws(VipsError) -> VipsImage { try Vips.binary("add", self, other) }

    fileprivate func dividedBy(_ other: VipsImage) throws(VipsError) -> VipsImage { try Vips.binary("divide", self, other) }

    fileprivate func squared() throws(VipsError) -> VipsImage { try times(self) }

    fileprivate func absolute() throws(VipsError) -> VipsImage { try applying("abs") }

    /// max(x, 0), as (x + |x|) / 2.
    fileprivate func positivePart() throws(VipsError) -> VipsImage { try plus(try absolute()).linear(0.5, 0) }
}

extension Vips {
    fileprivate static func binary(_ name: String, _ left: VipsImage, _ right: VipsImage) throws(VipsError) -> VipsImage {
        guard let out = try call(name, ["left": .image(left), "right": .image(right)])["out"]?.image else {
            throw VipsError(operation: name, message: "\(name) gave no output image")
        }
        return out
    }

    fileprivate static func bandjoin(_ images: [VipsImage]) throws(VipsError) -> VipsImage {
        guard let out = try call("bandjoin", ["in": .images(images)])["out"]?.image else {
            throw VipsError(operation: "bandjoin", message: "bandjoin gave no output image")
        }
        return out
    }

    fileprivate static func ifThenElse(_ condition: VipsImage, _ yes: VipsImage, _ no: VipsImage) throws(VipsError) -> VipsImage {
        guard let out = try call("ifthenelse", ["cond": .image(condition), "in1": .image(yes), "in2": .image(no)])["out"]?.image else {
            throw VipsError(operation: "ifthenelse", message: "ifthenelse gave no output image")
        }
        return out
    }
}
