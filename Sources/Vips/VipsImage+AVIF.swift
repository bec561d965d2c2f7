import CAvif
import CVips
import Foundation

/// How libavif encodes one image: the AV1 encoder, its speed and quantizer, and what the file
/// keeps.
public struct AVIFEncoding: Sendable, Hashable {
    /// The AV1 encoders libavif reaches.
    public enum Codec: String, Sendable, CaseIterable {
        /// libaom, the reference encoder (libvips' heifsave reaches only this one).
        case aom
        /// rav1e.
        case rav1e
        /// SVT-AV1.
        case svt
    }

    /// The AV1 encoder.
    public var codec: Codec
    /// The encoder's speed, 0 (slowest, smallest) – 10; each codec clamps it to its own range.
    public var speed: Int
    /// AV1's quantizer, 0 (best) – 63, for colour and alpha alike.
    public var quantizer: Int
    /// Mathematically lossless: the RGB values kept as they are, in 4:4:4, at quantizer 0.
    public var lossless: Bool
    /// Colour at full resolution (4:4:4) rather than halved both ways (4:2:0).
    public var fullChroma: Bool
    /// Write the ICC profile, EXIF and XMP the image carries (libvips' savers without `strip`).
    public var keepsMetadata: Bool
    /// The codec's own options (`"deltaq-mode=3"`, …), comma-separated; nil for none.
    public var codecOptions: String?

    /// An encoding with every choice made.
    public init(
        codec: Codec, speed: Int, quantizer: Int, lossless: Bool = false, fullChroma: Bool = false, keepsMetadata: Bool = true,
        codecOptions: String? = nil
    ) {
        self.codec = codec
        self.speed = speed
        self.quantizer = quantizer
        self.lossless = lossless
        self.fullChroma = fullChroma
        self.keepsMetadata = keepsMetadata
        self.codecOptions = codecOptions
    }

    /// The widest side AV1 codes (its frame sizes are 16-bit).
    public static let mostSide = 65536

    /// The pixels from which an image is coded in two tiles, across its longer side, that two
    /// threads can code at once; smaller images are one tile.
    static let tiledPixels = 1 << 20

    /// The tiles an image of `width`×`height` is coded in, as log2 of their rows and columns:
    /// set by its size alone, never by the cores, since tiles change the bytes. A tile's edges
    /// cost some bytes, so small images, quick to code anyway, stay whole; aom adds tiles past
    /// its largest tile's size.
    static func tiles(width: Int, height: Int) -> (rowsLog2: Int32, columnsLog2: Int32) {
        guard width * height >= tiledPixels else { return (0, 0) }
        return width >= height ? (0, 1) : (1, 0)
    }
}

extension VipsImage {
    /// The image encoded as AVIF by libavif, from its 8-bit sRGB pixels (alpha kept), with up to
    /// `cores` threads of the AV1 encoder's own.
    ///
    /// The pixels are what libvips' heifsave would take for an 8-bit file: converted to sRGB
    /// (greyscale too), 16-bit scaled to 8, bands past the fourth dropped. With `keepsMetadata`
    /// the file carries the ICC profile, XMP, and the EXIF block libvips rebuilds from the
    /// image's fields, as heifsave writes them, when the image carries one or is not upright.
    ///
    /// The encoder's threads: an AV1 encode is most of an output's time, and the pipeline gives
    /// each image one core. While fewer encodes run than there are cores (the last images of a
    /// run, a run of one image), the cores the others would use sit idle: the encoder then runs
    /// on its share of them, `cores` over the AV1 encodes in flight, each thread on a tile of an
    /// image large enough to have two (`AVIFEncoding.tiles`). While every core has an encode,
    /// it runs on one thread, where threads would only contend.
    ///
    /// The tiles follow the image's size alone, and the threads never split a tile's rows (aom's
    /// row threads code another file than one thread does): the file's bytes depend only on the
    /// pixels and `encoding`, so a re-run, another machine or another replica writes the same
    /// bytes, and a name made from them (`{hash}`) stays.
    public func encodedAVIF(_ encoding: AVIFEncoding, cores: Int = 1) throws(VipsError) -> Data {
        guard width <= AVIFEncoding.mostSide, height <= AVIFEncoding.mostSide else {
            throw VipsError(
                operation: "avif",
                message: "\(width)×\(height) is too large for AVIF: AV1 codes at most \(AVIFEncoding.mostSide) pixels a side")
        }
        let source = try avifReady()
        let share = AVIFEncodes.begin(cores: cores)
        defer { AVIFEncodes.end() }
        // The blobs are read from `source`, which the pixel render keeps alive.
        let icc = encoding.keepsMetadata ? source.blob("icc-profile-data") : nil
        let exif = encoding.keepsMetadata ? source.blob("exif-data") : nil
        let xmp = encoding.keepsMetadata ? source.blob("xmp-data") : nil
        let bands = source.bands
        let tiles = AVIFEncoding.tiles(width: width, height: height)
        let encoded = try source.withMemory { pixels -> Result<Data, VipsError> in
            guard let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                return .failure(VipsError(operation: "avif", message: "the image has no pixels"))
            }
            var output = avifRWData(data: nil, size: 0)
            let capacity = 512
            var message = [CChar](repeating: 0, count: capacity)
            let result = (encoding.codecOptions ?? "").withCString { options in
                var settings = PlAVIFSettings(
                    codec: encoding.codec.choice, speed: Int32(encoding.speed), quantizer: Int32(encoding.quantizer),
                    lossless: encoding.lossless ? 1 : 0, full_chroma: encoding.fullChroma ? 1 : 0, threads: Int32(share),
                    tile_rows_log2: tiles.rowsLog2, tile_cols_log2: tiles.columnsLog2,
                    codec_options: encoding.codecOptions == nil ? nil : options, limited_range: 0)
                return withExtendedLifetime(source) {
                    pl_avif_encode(
                        base, UInt32(width), UInt32(height), UInt32(bands), UInt32(width * bands), &settings,
                        icc?.base, icc?.count ?? 0, exif?.base, exif?.count ?? 0, xmp?.base, xmp?.count ?? 0,
                        &output, &message, capacity)
                }
            }
            guard result == AVIF_RESULT_OK, let data = output.data else {
                let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failure(
                    VipsError(operation: "avif", message: "libavif (\(encoding.codec.rawValue)) could not encode the image: \(text)"))
            }
            return .success(Data(bytesNoCopy: data, count: output.size, deallocator: .custom { pointer, _ in avifFree(pointer) }))
        }
        return try encoded.get()
    }

    /// The image as libavif takes it: 8-bit sRGB or sRGB with alpha, every pixel computed, the
    /// EXIF block it carries (or its `exif-ifd` fields) rebuilt from the metadata, on a private
    /// copy. An upright image without either gets none: libvips would make one of the size and
    /// resolution alone.
    func avifReady() throws(VipsError) -> VipsImage {
        var image = try inEightBits()
        if image.interpretation != .sRGB || image.bands < 3 { image = try image.converted(to: .sRGB) }
        if image.bands > 4 { image = try image.extractingBands(0, count: 4) }
        let copy = try image.privateCopy()
        let carriesEXIF = fieldNames.contains { $0 == "exif-data" || $0.hasPrefix("exif-ifd") }
        guard carriesEXIF || copy.orientation > 1 else { return copy }
        guard withExtendedLifetime(copy, { pl_exif_update(copy.pointer) }) == 0 else {
            throw VipsError.fromLibrary(operation: "exif")
        }
        return copy
    }

    /// Where the metadata blob `name` is and how long, or nil when the image has none or an
    /// empty one; valid while the image lives.
    func blob(_ name: String) -> (base: UnsafePointer<UInt8>, count: Int)? {
        guard let bytes = blobBytes(name), let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        return (base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }
}

extension AVIFEncoding.Codec {
    /// libavif's name for the codec.
    var choice: avifCodecChoice {
        switch self {
        case .aom: AVIF_CODEC_CHOICE_AOM
        case .rav1e: AVIF_CODEC_CHOICE_RAV1E
        case .svt: AVIF_CODEC_CHOICE_SVT
        }
    }
}

/// The AV1 encodes in flight in this process, for sharing idle cores among them.
enum AVIFEncodes {
    private static let running = Locked(0)

    /// Counts one more encode and gives it its share of `cores`: all of them over the encodes
    /// now running, at least one.
    static func begin(cores: Int) -> Int {
        let count = running.withLock { count in
            count += 1
            return count
        }
        return max(1, cores / count)
    }

    /// Counts an encode done.
    static func end() {
        running.withLock { $0 -= 1 }
    }
}
