import CAvif
import CVips

/// What an AVIF's colour box (CICP, `nclx`) says its colours are, read by libavif from the
/// container alone. libvips 8.14's HEIF loader passes the box over and takes an AVIF without an
/// ICC profile for sRGB: a Display P3 image the box alone describes would be read as sRGB, its
/// colours dulled, where browsers show them as the box says.
public struct AVIFColourDescription: Sendable, Equatable {
    /// The colour primaries, as ITU-T H.273 numbers them (1: sRGB's, 12: P3 with D65 white).
    public let primaries: Int
    /// The transfer characteristics, as H.273 numbers them (13: sRGB's curve).
    public let transfer: Int
    /// Whether the file has an ICC profile, which then says what the colours are.
    public let hasICCProfile: Bool

    /// The description of the AVIF file at `path`; nil when libavif cannot read its container.
    public static func read(file path: String) -> AVIFColourDescription? {
        read(path: path, bytes: nil, count: 0)
    }

    /// The description of the AVIF in `bytes`; nil when libavif cannot read its container.
    public static func read(bytes: VipsBytes) -> AVIFColourDescription? {
        bytes.withUnsafeBytes { read(path: nil, bytes: $0.baseAddress?.assumingMemoryBound(to: UInt8.self), count: $0.count) }
    }

    private static func read(path: String?, bytes: UnsafePointer<UInt8>?, count: Int) -> AVIFColourDescription? {
        var primaries: Int32 = 0
        var transfer: Int32 = 0
        var hasICC: Int32 = 0
        guard pl_avif_colour_description(path, bytes, count, &primaries, &transfer, &hasICC) == 1 else { return nil }
        return AVIFColourDescription(primaries: Int(primaries), transfer: Int(transfer), hasICCProfile: hasICC != 0)
    }

    /// The ICC profile of the colours the box alone describes, when they are not sRGB's and
    /// libvips has one for them: its Display P3 for P3 primaries with D65 white and sRGB's curve
    /// (or BT.709's or BT.601's, within a few levels of it, or none given). Nil otherwise: the
    /// colours are read as sRGB, as libvips reads them (BT.2020, PQ and HLG have no profile here).
    public var impliedProfile: [UInt8]? {
        guard !hasICCProfile, primaries == 12, Self.sRGBLikeTransfers.contains(transfer) else { return nil }
        return Self.displayP3
    }

    /// Unspecified, BT.709, BT.601, sRGB, and BT.2020's 10- and 12-bit curves (BT.709's).
    private static let sRGBLikeTransfers: Set<Int> = [1, 2, 6, 13, 14, 15]

    /// libvips' built-in Display P3 profile, as its `icc_transform` attaches it to an image it
    /// converts to P3.
    private static let displayP3: [UInt8]? = {
        guard (try? Vips.start()) != nil, let pixel = try? VipsImage(pixels: [128, 128, 128], width: 1, height: 1, bands: 3) else {
            return nil
        }
        let arguments: [String: VipsValue] = [
            "output_profile": .string("p3"), "input_profile": .string("srgb"), "embedded": .boolean(false),
        ]
        return (try? pixel.applying("icc_transform", arguments))?.iccProfileBytes
    }()
}
