import Foundation

extension SSIMULACRA2 {
    /// The colour of `image` as linear RGB, three float bands 0…1, laid over `background` (a
    /// grey as stored, 0…1) where the image has alpha, as the reference blends before
    /// linearising. Greyscale gives three equal bands. Every step is a libvips operation, so
    /// the metric runs as vectorised C in any build rather than as Swift loops, which a debug
    /// build runs many times slower.
    static func linearRGB(_ image: VipsImage, background: Double) throws(VipsError) -> VipsImage {
        var source = image
        let known: [VipsImage.Interpretation] = [.sRGB, .rgb16, .blackAndWhite, .grey16]
        if !known.contains(source.interpretation) || !(source.bandFormat == .uchar || source.bandFormat == .ushort) {
            source = try source.inEightBits()
        }
        let scale = 1 / (source.bandFormat == .ushort ? 65535.0 : 255.0)
        let colourBands = min(3, source.colourBands)
        let stored = try source.extractingBands(0, count: colourBands)
        var colour: VipsImage
        if source.bandFormat == .uchar, !source.hasAlpha {
            // 256 values: the curve below is worked out once for each, in a table, rather than
            // for every pixel, with the same operations and so the same floats.
            guard let levels = try Vips.call("identity", [:])["out"]?.image else {
                throw VipsError(operation: "identity", message: "identity gave no output image")
            }
            let table = try linearised(fraction(levels, scale: scale))
            colour = try Vips.call("maplut", ["in": .image(stored), "lut": .image(table)])["out"].unwrapped("maplut")
        } else {
            colour = try fraction(stored, scale: scale)
            if source.hasAlpha {
                // c·a + bg·(1 − a), before the transfer curve.
                let alpha = try fraction(source.extractingBands(source.bands - 1), scale: scale)
                let shifted = try linear(colour, 1, -background)
                colour = try linear(binary("multiply", shifted, alpha), 1, background)
            }
            colour = try linearised(colour)
        }
        // Grey as three equal bands, each worked out as the one it copies.
        if colourBands < 3 {
            let grey = try colour.extractingBands(0)
            colour = try bandJoined([grey, grey, grey])
        }
        return try colour.rendered()
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
        var even = planes
        if width % 2 == 1 || height % 2 == 1 {
            even = try planes.applying(
                "embed",
                [
                    "x": .integer(0), "y": .integer(0), "width": .integer(width + width % 2),
                    "height": .integer(height + height % 2), "extend": .string("copy"),
                ])
        }
        return try even.applying("shrink", ["hshrink": .number(2), "vshrink": .number(2)]).rendered()
    }

    /// Linear RGB to XYB, already moved into the reference's positive range
    /// (X·14 + 0.42, Y + 0.01, B − Y + 0.55).
    static func xyb(_ linear: VipsImage) throws(VipsError) -> VipsImage {
        // Linear RGB 0…1 with a positive matrix and bias never mixes below zero, so the
        // reference's clamp at zero has nothing to do here.
        let mixed = try linear.applying("recomb", ["m": .image(VipsImage.matrix(opsin))])
        let cones = try Self.linear(mixed, 1, opsinBias).applying("math2_const", ["math2": .string("pow"), "c": .numbers([1.0 / 3])])
        // X = (L − M)/2, Y = (L + M)/2, B = S, with L, M, S less the cube root of the bias,
        // folded together with the shift into the positive range.
        let folded = try cones.applying("recomb", ["m": .image(VipsImage.matrix([[7, -7, 0], [0.5, 0.5, 0], [-0.5, -0.5, 1]]))])
        return try folded.applying("linear", ["a": .numbers([1, 1, 1]), "b": .numbers([0.42, 0.01 - cbrt(opsinBias), 0.55])])
            .rendered()
    }

    /// `image` blurred by `kernel` in both directions, with zeros beyond the edges as the
    /// reference's filter has: the image is framed in black as wide as the kernel reaches, so
    /// libvips' own edge handling only touches the frame, which is cut away again.
    static func blurred(_ image: VipsImage) throws(VipsError) -> VipsImage {
        let reach = kernel.count / 2
        let (width, height) = (image.width, image.height)
        let framed = try image.applying(
            "embed",
            [
                "x": .integer(reach), "y": .integer(reach), "width": .integer(width + 2 * reach),
                "height": .integer(height + 2 * reach), "extend": .string("black"),
            ])
        let mask = try VipsImage.matrix([kernel])
        let blurred = try framed.applying("convsep", ["mask": .image(mask), "precision": .string("float")])
        return try blurred.extracted(left: reach, top: reach, width: width, height: height).rendered()
    }

    /// One scale of the original: its XYB planes, their blurred means and blurred squares.
    struct Level: Sendable {
        let xyb: VipsImage
        let mean: VipsImage
        let square: VipsImage

        init(linear: VipsImage) throws(VipsError) {
            xyb = try SSIMULACRA2.xyb(linear)
            mean = try SSIMULACRA2.blurred(xyb)
            square = try SSIMULACRA2.blurred(SSIMULACRA2.binary("multiply", xyb, xyb))
        }

        /// This scale's 18 norms of `distorted` (its linear planes at this scale): for SSIM,
        /// artifacts and lost detail in turn, for X, Y and B, the mean and the 4-norm.
        func norms(of distorted: VipsImage) throws(VipsError) -> [Double] {
            typealias S = SSIMULACRA2
            let x1 = xyb
            let mu1 = mean
            let x2 = try S.xyb(distorted)
            let mu2 = try S.blurred(x2)
            let sigma22 = try S.blurred(S.binary("multiply", x2, x2))
            let sigma12 = try S.blurred(S.binary("multiply", x1, x2))
            let c2 = 0.0009
            // SSIM without the luminance denominator: the planes are already perceptual.
            let difference = try S.binary("subtract", mu1, mu2)
            let meanTerm = try S.linear(S.binary("multiply", difference, difference), -1, 1)
            let structure = try S.linear(S.binary("subtract", sigma12, S.binary("multiply", mu1, mu2)), 2, c2)
            let spread = try S.linear(
                S.binary(
                    "add", S.binary("subtract", square, S.binary("multiply", mu1, mu1)),
                    S.binary("subtract", sigma22, S.binary("multiply", mu2, mu2))), 1, c2)
            let ssim = try S.positivePart(S.linear(S.binary("divide", S.binary("multiply", meanTerm, structure), spread), -1, 1))
            // Above zero: the distorted image has an edge where the original is smooth
            // (ringing, blocking, banding); below: it is smooth where the original has an
            // edge (blur).
            let gained = try S.linear(S.binary("subtract", x2, mu2).applying("abs"), 1, 1)
            let had = try S.linear(S.binary("subtract", x1, mu1).applying("abs"), 1, 1)
            let edges = try S.linear(S.binary("divide", gained, had), 1, -1)
            let artifacts = try S.positivePart(edges)
            let lost = try S.positivePart(S.linear(edges, -1, 0))
            // The maps (bands: map, then plane), made once in memory: libvips computes an image
            // again for each use downstream, and the squares below read each map twice.
            let maps = try S.bandJoined([ssim, artifacts, lost]).rendered()
            // The maps and their squares: the sums of the first are the 1-norms', the sums of
            // squares of the second the 4-norms'.
            let joined = try S.bandJoined([maps, S.binary("multiply", maps, maps)])
            guard let statistics = try Vips.call("stats", ["in": .image(joined)])["out"]?.image else {
                throw VipsError(operation: "stats", message: "stats gave no output image")
            }
            let table = try statistics.rendered()
            let count = Double(distorted.width * distorted.height)
            var norms: [Double] = []
            for band in 0..<9 {
                // Row 0 is all bands together; columns 2 and 3 are the sum and sum of squares.
                let sum = try table.pixel(x: 2, y: 1 + band)[0]
                let fourth = try table.pixel(x: 3, y: 10 + band)[0]
                norms.append(sum / count)
                norms.append((fourth / count).squareRoot().squareRoot())
            }
            return norms
        }
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

    /// max(`image`, 0), as (|x| + x)/2, which is exact in floats and needs no operation newer
    /// than the libvips the pipeline supports.
    static func positivePart(_ image: VipsImage) throws(VipsError) -> VipsImage {
        try linear(binary("add", image.applying("abs"), image), 0.5, 0)
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
