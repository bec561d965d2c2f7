import CAvif
import CVips
import Foundation

/// An AVIF image sequence (an animated AVIF) read one frame at a time by libavif: libvips 8.14's
/// HEIF loader reads no sequence. Opening parses the container alone, so that the size and the
/// frame count can be checked before any frame is decoded; each frame is then decoded into 8-bit
/// sRGB (with alpha when the sequence has it), holding one frame's pixels at a time. EXIF and XMP
/// are not read; the ICC profile (or the one its colour box implies) is carried on every frame. For one thread at a time.
public final class AVIFSequenceReader {
    /// The loader name the sequence's `header()` carries where a libvips loader's name would be.
    public static let loader = "avifsequence"

    private let decoder: UnsafeMutablePointer<avifDecoder>
    // Fetched bytes libavif reads from where they are: kept alive while the decoder is.
    private let bytes: VipsBytes?
    private let icc: [UInt8]?
    // The frames decoded so far: libavif's own index is not moved by a frame that fails.
    private var decodedFrames = 0

    /// The width of every frame.
    public let width: Int
    /// The height of every frame.
    public let height: Int
    /// The frames the container declares.
    public let frameCount: Int
    /// Whether the frames have an alpha band.
    public let hasAlpha: Bool
    /// How many times the sequence plays, as libvips' `loop` field counts (0: for ever; libavif
    /// before 1.0 reads no count, so 0).
    public let loop: Int

    /// Opens the sequence in the file at `path`.
    public convenience init(file path: String) throws(VipsError) {
        try self.init(path: path, bytes: nil)
    }

    /// Opens the sequence in `bytes`, read where they are.
    public convenience init(bytes: VipsBytes) throws(VipsError) {
        try self.init(path: nil, bytes: bytes)
    }

    private init(path: String?, bytes: VipsBytes?) throws(VipsError) {
        try Vips.start()
        let capacity = 512
        var message = [CChar](repeating: 0, count: capacity)
        let opened =
            if let path {
                pl_avif_sequence_open(path, nil, 0, &message, capacity)
            } else {
                bytes?.withUnsafeBytes { buffer in
                    pl_avif_sequence_open(nil, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count, &message, capacity)
                }
            }
        guard let opened else { throw Self.failure("read the image sequence", message) }
        decoder = opened
        self.bytes = bytes
        let image = opened.pointee.image.pointee
        width = Int(image.width)
        height = Int(image.height)
        frameCount = Int(opened.pointee.imageCount)
        hasAlpha = opened.pointee.alphaPresent != 0
        loop = Int(pl_avif_sequence_loop(opened))
        // A sequence the colour box alone describes as Display P3 carries that profile, so that
        // its frames are converted as a profile's would be.
        icc =
            image.icc.size > 0
            ? Array(UnsafeBufferPointer(start: image.icc.data, count: image.icc.size))
            : AVIFColourDescription(
                primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics), hasICCProfile: false
            ).impliedProfile
    }

    deinit { avifDecoderDestroy(decoder) }

    /// Whether the file at `path` is an AVIF image sequence, by its brand (`avis`).
    public static func isSequence(file path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 12) else { return false }
        return isSequence(head: Array(head))
    }

    /// Whether `bytes` are an AVIF image sequence, by their brand (`avis`).
    public static func isSequence(bytes: VipsBytes) -> Bool {
        bytes.withUnsafeBytes { isSequence(head: Array($0.prefix(12))) }
    }

    /// Whether a file's first 12 bytes name the `avis` brand in its `ftyp` box.
    private static func isSequence(head: [UInt8]) -> Bool {
        head.count == 12 && head[4..<8].elementsEqual("ftyp".utf8) && head[8..<12].elementsEqual("avis".utf8)
    }

    /// The sequence described as libvips describes a file it opened, with no pixels: its size,
    /// bands, `n-pages` (the frame count), ICC profile and `vips-loader` (`loader`). Rendering
    /// it fails: the frames come from `nextFrames(_:)`.
    public func header() throws(VipsError) -> VipsImage {
        guard let image = pl_header_image(Int32(clamping: width), Int32(clamping: height), hasAlpha ? 4 : 3) else {
            throw VipsError.fromLibrary(operation: "avif")
        }
        // Nobody else sees the new image yet: its fields are set in place.
        vips_image_set_string(image, "vips-loader", Self.loader)
        vips_image_set_int(image, "n-pages", Int32(clamping: frameCount))
        setICC(on: image)
        return VipsImage(taking: image)
    }

    /// The next `count` frames, decoded into 8-bit sRGB pixels of their own, stacked top to
    /// bottom (`page-height` set when there are several), and how long each is shown, in
    /// milliseconds (as libvips' `delay` field holds them).
    public func nextFrames(_ count: Int = 1) throws(VipsError) -> (image: VipsImage, delays: [Int]) {
        let bands = hasAlpha ? 4 : 3
        let frameBytes = width * height * bands
        let (bytes, overflow) = frameBytes.multipliedReportingOverflow(by: count)
        guard frameBytes > 0, count > 0, !overflow, height * count <= Int(Int32.max), let pixels = pl_map_buffer(bytes) else {
            throw VipsError(operation: "avif", message: "no memory for \(count) frames of \(width)×\(height)")
        }
        let capacity = 512
        var message = [CChar](repeating: 0, count: capacity)
        var delays: [Int] = []
        for index in 0..<count {
            var seconds = 0.0
            let result = pl_avif_sequence_next(
                decoder, (pixels + index * frameBytes).assumingMemoryBound(to: UInt8.self), UInt32(width), UInt32(height),
                UInt32(bands), &seconds, &message, capacity)
            guard result == AVIF_RESULT_OK else {
                pl_unmap_buffer(pixels, bytes)
                throw Self.failure("decode frame \(decodedFrames + 1) of \(frameCount)", message)
            }
            decodedFrames += 1
            // A hostile duration is held to what libvips' delay field (32-bit) takes.
            delays.append(seconds.isFinite ? Int(min(max(seconds * 1000, 0), Double(Int32.max)).rounded()) : 0)
        }
        guard let image = pl_image_taking_buffer(pixels, bytes, Int32(width), Int32(height * count), Int32(bands)) else {
            throw VipsError.fromLibrary(operation: "avif")
        }
        // Nobody else sees the new image yet: its fields are set in place.
        image.pointee.Type = VIPS_INTERPRETATION_sRGB
        if count > 1 { vips_image_set_int(image, "page-height", Int32(height)) }
        setICC(on: image)
        return (VipsImage(taking: image), delays)
    }

    private func setICC(on image: UnsafeMutablePointer<CVips.VipsImage>) {
        guard let icc else { return }
        icc.withUnsafeBytes { vips_image_set_blob_copy(image, "icc-profile-data", $0.baseAddress, $0.count) }
    }

    private static func failure(_ doing: String, _ message: [CChar]) -> VipsError {
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return VipsError(operation: "avif", message: "libavif could not \(doing): \(text)")
    }
}
