import CVips

extension VipsImage.Interpretation {
    /// CIE L\*a\*b\*: lightness 0–100 and two chroma axes, as float.
    public static let lab = VipsImage.Interpretation(VIPS_INTERPRETATION_LAB)
    /// CIE LCh: lightness 0–100, chroma, and hue in degrees, as float.
    public static let lch = VipsImage.Interpretation(VIPS_INTERPRETATION_LCH)
}

extension VipsImage {
    /// How many bands hold colour: all but a trailing alpha band.
    public var colourBands: Int { bands - (hasAlpha ? 1 : 0) }

    /// Whether the colour is shades of grey: labelled greyscale, or a single colour band.
    public var isGreyscale: Bool {
        interpretation == .blackAndWhite || interpretation == .grey16 || colourBands < 3
    }

    /// The image in colour when it is greyscale and `rgb` (red, green and blue, 0–255) is not a
    /// grey, so that a coloured border, letterbox, text or overlay keeps its colour, as it would
    /// on a colour image; alpha and bit depth are kept. Any other image is returned as it is.
    public func holdingColour(_ rgb: [Double]) throws(VipsError) -> VipsImage {
        guard rgb.count >= 3, rgb[0] != rgb[1] || rgb[1] != rgb[2] else { return self }
        return try inColour()
    }

    /// The image flattened onto the sRGB colour `rgb` (0–255 a component): a grey image under a
    /// colour that is not a grey becomes colour first, a grey one takes the colour's grey, and a
    /// 16-bit one the colour in its own range of values.
    public func flattened(ontoSRGB rgb: [Double]) throws(VipsError) -> VipsImage {
        let rgb = Array(rgb.prefix(3))
        let image = try holdingColour(rgb)
        var background = image.isGreyscale ? try VipsImage.sRGBColour(rgb, in: .blackAndWhite) : rgb
        if image.bandFormat == .ushort { background = background.map { $0 * 257 } }
        return try image.flattened(background: background)
    }

    /// The image in colour (sRGB, or 16-bit RGB) when it is greyscale, alpha and bit depth
    /// kept; any other image as it is.
    public func inColour() throws(VipsError) -> VipsImage {
        guard isGreyscale else { return self }
        let sixteenBits = bandFormat == .ushort
        // Raw bands labelled "multiband" have no colour space for libvips to convert from.
        let grey =
            interpretation == .blackAndWhite || interpretation == .grey16
            ? self : try labelled(as: sixteenBits ? .grey16 : .blackAndWhite)
        return try grey.converted(to: sixteenBits ? .rgb16 : .sRGB)
    }

    /// The image as 8-bit sRGB, or 8-bit greyscale when it is greyscale; alpha is kept and
    /// scaled with the colour (a 16-bit alpha of 65535 becomes 255).
    ///
    /// Colour steps work on these two shapes only, so that every step gives 8-bit output of the
    /// input's kind whatever the decoder produced (16-bit PNG, CMYK JPEG, …).
    public func inEightBits() throws(VipsError) -> VipsImage {
        let target: Interpretation = isGreyscale ? .blackAndWhite : .sRGB
        if bandFormat == .uchar {
            if interpretation == target { return self }
            // Raw 8-bit bands labelled "multiband" are already what the label says.
            if interpretation == .multiband { return try labelled(as: target) }
        }
        return try converted(to: target)
    }

    /// Bands `first` to `first + count - 1`.
    public func extractingBands(_ first: Int, count: Int = 1) throws(VipsError) -> VipsImage {
        try applying("extract_band", ["band": .integer(first), "n": .integer(count)])
    }

    /// This image's bands followed by `other`'s, labelled as this image is.
    public func joiningBands(_ other: VipsImage) throws(VipsError) -> VipsImage {
        guard let joined = try Vips.call("bandjoin", ["in": .images([self, other])])["out"]?.image else {
            throw VipsError(operation: "bandjoin", message: "bandjoin gave no output image")
        }
        return joined
    }

    /// Runs `operation` on the colour bands only and puts the alpha band back unchanged.
    ///
    /// Colour operations such as `colourspace` or `invert` would otherwise also transform alpha,
    /// or drop it. `operation` must keep the band format (8-bit in, 8-bit out) so the bands join.
    public func withAlphaSetAside(
        _ operation: (VipsImage) throws(VipsError) -> VipsImage
    ) throws(VipsError) -> VipsImage {
        guard hasAlpha else { return try operation(self) }
        let colour = try extractingBands(0, count: bands - 1)
        let alpha = try extractingBands(bands - 1)
        return try operation(colour).joiningBands(alpha)
    }

    /// Rounds to the nearest integer and casts to 8 bits (a plain cast truncates: 127.9 → 127).
    public func roundedToEightBits() throws(VipsError) -> VipsImage {
        if bandFormat == .uchar { return self }
        return try applying("round", ["round": .string("rint")]).cast(to: .uchar)
    }

    /// One sRGB colour (red, green, blue 0–255) as libvips converts it to `interpretation`:
    /// for example `.lab` gives L\*, a\*, b\*, and `.blackAndWhite` its grey level.
    public static func sRGBColour(_ rgb: [Double], in interpretation: Interpretation) throws(VipsError) -> [Double] {
        guard rgb.count >= 3 else {
            throw VipsError(operation: "colourspace", message: "an sRGB colour needs red, green and blue")
        }
        try Vips.start()
        let black = try Vips.call("black", ["width": .integer(1), "height": .integer(1), "bands": .integer(3)])["out"]?.image
        guard let black else { throw VipsError(operation: "black", message: "black gave no output image") }
        let pixel =
            try black
            .applying("linear", ["a": .numbers([1, 1, 1]), "b": .numbers(Array(rgb.prefix(3)))])
            .roundedToEightBits()
            .labelled(as: .sRGB)
        if interpretation == .sRGB { return try pixel.pixel(x: 0, y: 0) }
        return try pixel.converted(to: interpretation).pixel(x: 0, y: 0)
    }
}
