import CVips
import Foundation

extension SSIMULACRA2 {
    /// The colour of `image` as linear RGB, three float bands 0…1 in new planes of their own,
    /// laid over `background` (a grey as stored, 0…1) where the image has alpha, as the
    /// reference blends before linearising. Greyscale gives three equal bands. The steps are
    /// libvips operations and C (`CVips/ssimulacra2.h`): the metric runs as compiled C in any
    /// build, where Swift loops in a debug build would run many times slower.
    static func linearRGB(_ image: VipsImage, background: Double) throws(VipsError) -> VipsImage {
        var source = image
        let known: [VipsImage.Interpretation] = [.sRGB, .rgb16, .blackAndWhite, .grey16]
        if !known.contains(source.interpretation) || !(source.bandFormat == .uchar || source.bandFormat == .ushort) {
            source = try source.inEightBits()
        }
        let scale = 1 / (source.bandFormat == .ushort ? 65535.0 : 255.0)
        let colourBands = min(3, source.colourBands)
        let stored = try source.extractingBands(0, count: colourBands)
        if source.bandFormat == .uchar, !source.hasAlpha {
            let table = try eightBitLevels.get()
            let bytes = try stored.rendered()
            return try withExtendedLifetime(bytes) { () throws(VipsError) -> VipsImage in
                guard let values = pl_uchar_values(bytes.pointer) else {
                    throw VipsError(operation: "ssimulacra2", message: "SSIMULACRA2 needs 8-bit colour in memory")
                }
                return try planes(width: bytes.width, height: bytes.height, bands: 3) {
                    pl_ssim2_lookup(values, Int32(colourBands), table, $0, bytes.width * bytes.height)
                }
            }
        }
        var colour = try fraction(stored, scale: scale)
        if source.hasAlpha {
            // c·a + bg·(1 − a), before the transfer curve.
            let alpha = try fraction(source.extractingBands(source.bands - 1), scale: scale)
            let shifted = try linear(colour, 1, -background)
            colour = try linear(binary("multiply", shifted, alpha), 1, background)
        }
        colour = try linearised(colour)
        // Grey as three equal bands, each worked out as the one it copies.
        if colourBands < 3 {
            let grey = try colour.extractingBands(0)
            colour = try bandJoined([grey, grey, grey])
        }
        // Into planes of its own, as the 8-bit path's: the XYB step overwrites them.
        let rendered = try colour.rendered()
        return try withValues(of: rendered, bands: 3) { values, pixels throws(VipsError) in
            try planes(width: rendered.width, height: rendered.height, bands: 3) { $0.update(from: values, count: pixels * 3) }
        }
    }

    /// The 256 levels of 8-bit colour in linear light: the curve below worked out once for
    /// each, with the same operations as for other pixels and so the same floats, rather than
    /// for every pixel of every candidate.
    private static let eightBitLevels = Result { () throws(VipsError) -> [Float] in
        guard let levels = try Vips.call("identity", [:])["out"]?.image else {
            throw VipsError(operation: "identity", message: "identity gave no output image")
        }
        return try linearised(fraction(levels, scale: 1 / 255.0)).values().map { Float($0) }
    }

    /// `colour` (0…1, as stored) with the sRGB transfer curve undone: a straight line near
    /// black, a power above.
    private static func linearised(_ colour: VipsImage) throws(VipsError) -> VipsImage {
        let low = try linear(colour, 1 / 12.92, 0)
        let high = try linear(colour, 1 / 1.055, 0.055 / 1.055).applying("math2_const", ["math2": .string("pow"), "c": .numbers([2.4])])
        let isLow = try colour.applying("relational_const", ["relational": .string("lesseq"), "c": .numbers([0.04045])])
        return try Vips.call("ifthenelse", ["cond": .image(isLow), "in1": .image(low), "in2": .image(high)])["out"]
            .unwrapped("ifthenelse")
    }

    /// Halves linear planes by 2×2 means, repeating the last row or column of an odd side.
    static func halved(_ planes: VipsImage) throws(VipsError) -> VipsImage {
        let (width, height) = (planes.width, planes.height)
        return try withValues(of: planes, bands: 3) { values, _ throws(VipsError) in
            try Self.planes(width: (width + 1) / 2, height: (height + 1) / 2, bands: 3) {
                pl_ssim2_halve(values, $0, Int32(width), Int32(height))
            }
        }
    }

    /// Linear RGB planes (made by `linearRGB` or `halved`, and not needed after) turned into
    /// XYB in place, each row then plane after plane, already moved into the reference's
    /// positive range (X·14 + 0.42, Y + 0.01, B − Y + 0.55).
    static func turnedIntoXYB(_ linear: VipsImage) throws(VipsError) -> VipsImage {
        // Linear RGB 0…1 with a positive matrix and bias never mixes below zero, so the
        // reference's clamp at zero has nothing to do here. X = (L − M)/2 and Y = (L + M)/2,
        // with L, M, S less the cube root of the bias, folded together with the shift.
        let matrix = opsin.flatMap { $0 }
        let status = try withValues(of: linear, bands: 3) { values, _ in
            pl_ssim2_xyb(values, Int32(linear.width), Int32(linear.height), matrix, opsinBias, 0.01 - cbrt(opsinBias))
        }
        try succeeded(status)
        return linear
    }

    /// The blur's 9 taps as the C side takes them.
    static let taps: [Float] = {
        precondition(kernel.count == 9, "the C side blurs with 9 taps")
        return kernel.map { Float($0) }
    }()

    /// One scale of the original: its XYB planes and what every score reads of them, worked
    /// out once: the blurred means and the variance (`pl_ssim2_original_terms`).
    struct Level: Sendable {
        /// 3 floats a pixel, each row plane after plane: X, Y, B.
        let xyb: VipsImage
        /// 6 floats a pixel, each row plane after plane: μ₁ and σ₁², each X, Y, B.
        let terms: VipsImage

        /// SSIM's stabilising constant.
        static let c2 = 0.0009

        /// Takes `linear` (this scale's planes) over as the XYB planes.
        init(linear: VipsImage) throws(VipsError) {
            typealias S = SSIMULACRA2
            let xyb = try S.turnedIntoXYB(linear)
            let (width, height) = (xyb.width, xyb.height)
            terms = try S.withValues(of: xyb, bands: 3) { x1, _ throws(VipsError) in
                var status: Int32 = 0
                let terms = try S.planes(width: width, height: height, bands: 6) {
                    status = pl_ssim2_original_terms(x1, $0, Int32(width), Int32(height), S.taps)
                }
                try S.succeeded(status)
                return terms
            }
            self.xyb = xyb
        }

        /// This scale's 18 norms of `distorted` (its linear planes at this scale, which become
        /// its XYB): for SSIM, artifacts and lost detail in turn, for X, Y and B, the mean and
        /// the 4-norm.
        func norms(of distorted: VipsImage) throws(VipsError) -> [Double] {
            typealias S = SSIMULACRA2
            let x2 = try S.turnedIntoXYB(distorted)
            let (width, height) = (x2.width, x2.height)
            var sums = [Double](repeating: 0, count: 18)
            let status = try S.withValues(of: xyb, bands: 3) { x1, _ throws(VipsError) in
                try S.withValues(of: x2, bands: 3) { x2, _ throws(VipsError) in
                    try S.withValues(of: terms, bands: 6) { terms, _ throws(VipsError) in
                        pl_ssim2_sums(x1, x2, terms, Int32(width), Int32(height), S.taps, Self.c2, &sums)
                    }
                }
            }
            try S.succeeded(status)
            let count = Double(width * height)
            var norms: [Double] = []
            for band in 0..<9 {
                norms.append(sums[band * 2] / count)
                norms.append((sums[band * 2 + 1] / count).squareRoot().squareRoot())
            }
            return norms
        }
    }

    /// Lends the float values of `image` (`bands` bands, in memory: what the steps above
    /// make, and `linearRGB` and `halved` give) to `body`, with its pixel count. Only
    /// `turnedIntoXYB` writes through them, to planes nothing else reads.
    static func withValues<Result>(
        of image: VipsImage, bands: Int, _ body: (UnsafeMutablePointer<Float>, Int) throws(VipsError) -> Result
    ) throws(VipsError) -> Result {
        try withExtendedLifetime(image) { () throws(VipsError) -> Result in
            guard image.bands == bands, let values = pl_float_values(image.pointer) else {
                throw VipsError(operation: "ssimulacra2", message: "SSIMULACRA2 needs \(bands) float bands in memory")
            }
            return try body(values, image.width * image.height)
        }
    }

    /// Throws unless `status`, what a C step that allocates returned, is 0.
    static func succeeded(_ status: Int32) throws(VipsError) {
        guard status == 0 else { throw VipsError(operation: "ssimulacra2", message: "out of memory") }
    }

    /// A new float image of `bands` bands in memory, its values set by `fill`.
    static func planes(
        width: Int, height: Int, bands: Int, _ fill: (UnsafeMutablePointer<Float>) -> Void
    ) throws(VipsError) -> VipsImage {
        guard let made = pl_new_float_image(Int32(width), Int32(height), Int32(bands)) else {
            throw VipsError.fromLibrary(operation: "ssimulacra2")
        }
        let image = VipsImage(taking: made)
        guard let values = pl_float_values(made) else { throw VipsError(operation: "ssimulacra2", message: "a new image is not in memory") }
        fill(values)
        return image
    }

    // MARK: Operations

    /// `image` cast to floats and multiplied by `scale`.
    private static func fraction(_ image: VipsImage, scale: Double) throws(VipsError) -> VipsImage {
        try linear(image.cast(to: .float), scale, 0)
    }

    /// a·`image` + b in every band, as floats.
    static func linear(_ image: VipsImage, _ a: Double, _ b: Double) throws(VipsError) -> VipsImage {
        try image.applying("linear", ["a": .numbers([a]), "b": .numbers([b])])
    }

    /// The libvips operation `name` (`add`, `subtract`, `multiply`, `divide`) of two images.
    static func binary(_ name: String, _ left: VipsImage, _ right: VipsImage) throws(VipsError) -> VipsImage {
        try Vips.call(name, ["left": .image(left), "right": .image(right)])["out"].unwrapped(name)
    }

    /// The bands of `images`, one after another.
    static func bandJoined(_ images: [VipsImage]) throws(VipsError) -> VipsImage {
        try Vips.call("bandjoin", ["in": .images(images)])["out"].unwrapped("bandjoin")
    }
}

extension Optional where Wrapped == VipsValue {
    /// The image an operation gave, or an error naming it.
    fileprivate func unwrapped(_ operation: String) throws(VipsError) -> VipsImage {
        guard let image = self?.image else { throw VipsError(operation: operation, message: "\(operation) gave no output image") }
        return image
    }
}
