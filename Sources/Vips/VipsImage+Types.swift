import CVips

extension VipsImage {
    /// How the bands of an image are to be understood (sRGB, CMYK, greyscale, …).
    public struct Interpretation: Hashable, Sendable, CustomStringConvertible {
        let raw: VipsInterpretation
        init(_ raw: VipsInterpretation) { self.raw = raw }

        /// 8-bit sRGB colour.
        public static let sRGB = Interpretation(VIPS_INTERPRETATION_sRGB)
        /// 16-bit sRGB colour.
        public static let rgb16 = Interpretation(VIPS_INTERPRETATION_RGB16)
        /// 8-bit greyscale (libvips' `B_W`).
        public static let blackAndWhite = Interpretation(VIPS_INTERPRETATION_B_W)
        /// 16-bit greyscale.
        public static let grey16 = Interpretation(VIPS_INTERPRETATION_GREY16)
        /// Cyan, magenta, yellow and black ink.
        public static let cmyk = Interpretation(VIPS_INTERPRETATION_CMYK)
        /// Bands with no colour meaning.
        public static let multiband = Interpretation(VIPS_INTERPRETATION_MULTIBAND)

        /// libvips' name for it (`srgb`, `b-w`, …).
        public var description: String {
            guard let name = vips_enum_nick(vips_interpretation_get_type(), Int32(raw.rawValue)) else {
                return "interpretation \(raw.rawValue)"
            }
            return String(cString: name)
        }
    }

    /// The numeric type of each band of each pixel.
    public struct BandFormat: Hashable, Sendable, CustomStringConvertible {
        let raw: VipsBandFormat
        init(_ raw: VipsBandFormat) { self.raw = raw }

        /// Unsigned 8 bits a band.
        public static let uchar = BandFormat(VIPS_FORMAT_UCHAR)
        /// Unsigned 16 bits a band.
        public static let ushort = BandFormat(VIPS_FORMAT_USHORT)
        /// 32-bit floating point a band.
        public static let float = BandFormat(VIPS_FORMAT_FLOAT)

        /// libvips' name for it (`uchar`, `float`, …).
        public var description: String {
            guard let name = vips_enum_nick(vips_band_format_get_type(), Int32(raw.rawValue)) else {
                return "format \(raw.rawValue)"
            }
            return String(cString: name)
        }
    }

    /// The interpolation kernel a resize uses.
    public enum Kernel: String, CaseIterable, Sendable {
        /// Nearest neighbour, bilinear, bicubic, Mitchell-Netravali, and Lanczos with two or three lobes,
        /// by libvips' names; `lanczos3` is the sharpest and the default.
        case nearest, linear, cubic, mitchell, lanczos2, lanczos3

        var raw: VipsKernel {
            switch self {
            case .nearest: VIPS_KERNEL_NEAREST
            case .linear: VIPS_KERNEL_LINEAR
            case .cubic: VIPS_KERNEL_CUBIC
            case .mitchell: VIPS_KERNEL_MITCHELL
            case .lanczos2: VIPS_KERNEL_LANCZOS2
            case .lanczos3: VIPS_KERNEL_LANCZOS3
            }
        }
    }

    /// How libvips' smart crop finds the part of an image worth keeping.
    public enum Interest: String, CaseIterable, Sendable {
        /// Regions with the most luminance variation (Shannon entropy).
        case entropy
        /// Regions a viewer is likely drawn to: skin tones, saturated colour, edges.
        case attention

        var raw: VipsInteresting {
            switch self {
            case .entropy: VIPS_INTERESTING_ENTROPY
            case .attention: VIPS_INTERESTING_ATTENTION
            }
        }
    }
}
