import CAvif
import CVips
import Foundation

extension VipsImage {
    /// Whether the file at `path` is an AVIF image sequence, by its brand (`avis`), which
    /// libvips' HEIF loader does not take: read it with `firstAVIFFrame(file:maxPixels:)`.
    public static func isAVIFSequence(file path: String) -> Bool {
        AVIFSequenceReader.isSequence(file: path)
    }

    /// The first image of the AVIF file at `path` (a still, or a sequence's first frame), read by
    /// libavif as 8-bit RGBA: libvips reads no AVIF sequence, so an animated AVIF is read this
    /// way where one picture of it will do. Metadata is not read; an image of more than
    /// `maxPixels` is refused.
    public static func firstAVIFFrame(file path: String, maxPixels: Int) throws(VipsError) -> VipsImage {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0
        var height: UInt32 = 0
        let result = pl_avif_first_frame(path, UInt32(clamping: maxPixels), &pixels, &width, &height)
        guard result == AVIF_RESULT_OK, let pixels else {
            throw VipsError(operation: "avif", message: "libavif could not read \(path): \(String(cString: avifResultToString(result)))")
        }
        defer { avifFree(pixels) }
        let rgba = Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * 4))
        return try VipsImage(pixels: rgba, width: Int(width), height: Int(height), bands: 4)
    }

    /// The frames of an animation, stacked top to bottom `frameHeight` rows each, encoded as an
    /// AVIF image sequence by libavif, each frame shown for its delay in `delays` (milliseconds,
    /// as libvips' `delay` field holds them), with up to `cores` threads of the AV1 encoder's own.
    ///
    /// libvips cannot write AVIF sequences (its heifsave writes the first page only), so the
    /// frames go to libavif one at a time: each is computed, converted to YUV and handed to the
    /// encoder before the next is computed, so the whole animation's pixels are never held at
    /// once (the encoder keeps the frames' AV1 data). Pixels and metadata are as `encodedAVIF`
    /// takes them, the file's metadata from the first frame. The movie headers carry no clock
    /// time, so the bytes depend only on the frames and the settings.
    ///
    /// A frame whose delay is `shortestDelay` or less (0, or none) is shown for `defaultDelay`.
    /// `loop`, how many times the animation plays (0 or nil for ever), is written only by
    /// libavif 1.0 and later; earlier versions (Debian 12 has 0.11) write no count, and players
    /// loop such a sequence for ever.
    public func encodedAVIFSequence(
        _ encoding: AVIFEncoding, frameHeight: Int, delays: [Int], loop: Int?, cores: Int = 1
    ) throws(VipsError) -> Data {
        try checkFrames(of: frameHeight)
        let source = try avifReady()
        let share = AVIFEncodes.begin(cores: cores)
        defer { AVIFEncodes.end() }
        let icc = encoding.keepsMetadata ? source.blob("icc-profile-data") : nil
        let exif = encoding.keepsMetadata ? source.blob("exif-data") : nil
        let xmp = encoding.keepsMetadata ? source.blob("xmp-data") : nil
        let bands = source.bands
        let tiles = AVIFEncoding.tiles(width: width, height: frameHeight)
        // The codec's options are copied by libavif when the encoder is made; the frames need
        // only the YUV choices.
        var settings = PlAVIFSettings(
            codec: encoding.codec.choice, speed: Int32(encoding.speed), quantizer: Int32(encoding.quantizer),
            lossless: encoding.lossless ? 1 : 0, full_chroma: encoding.fullChroma ? 1 : 0, threads: Int32(share),
            tile_rows_log2: tiles.rowsLog2, tile_cols_log2: tiles.columnsLog2, codec_options: nil, limited_range: 1)
        let made = (encoding.codecOptions ?? "").withCString { options in
            var withOptions = settings
            withOptions.codec_options = encoding.codecOptions == nil ? nil : options
            return pl_avif_sequence_make(&withOptions, UInt64(Self.millisecondsPerSecond), Int32(clamping: loop ?? 0))
        }
        guard let encoder = made else {
            throw VipsError(operation: "avif", message: "libavif (\(encoding.codec.rawValue)) could not make an encoder")
        }
        defer { avifEncoderDestroy(encoder) }
        let capacity = 512
        var message = [CChar](repeating: 0, count: capacity)
        func failure(_ doing: String) -> VipsError {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return VipsError(operation: "avif", message: "libavif (\(encoding.codec.rawValue)) could not \(doing): \(text)")
        }
        let frames = height / frameHeight
        for index in 0..<frames {
            let delay = index < delays.count && delays[index] > Self.shortestDelay ? delays[index] : Self.defaultDelay
            let frame = try source.extracted(left: 0, top: index * frameHeight, width: width, height: frameHeight)
            let first = index == 0
            let result = try frame.withMemory { pixels -> avifResult in
                guard let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return AVIF_RESULT_NO_CONTENT }
                return withExtendedLifetime(source) {
                    pl_avif_sequence_add(
                        encoder, base, UInt32(width), UInt32(frameHeight), UInt32(bands), UInt32(width * bands), &settings,
                        icc == nil ? 0 : 1, first ? icc?.base : nil, first ? icc?.count ?? 0 : 0, first ? exif?.base : nil,
                        first ? exif?.count ?? 0 : 0,
                        first ? xmp?.base : nil, first ? xmp?.count ?? 0 : 0, UInt64(delay), &message, capacity)
                }
            }
            guard result == AVIF_RESULT_OK else { throw failure("encode frame \(index + 1) of \(frames)") }
        }
        var output = avifRWData(data: nil, size: 0)
        guard pl_avif_sequence_finish(encoder, &output, &message, capacity) == AVIF_RESULT_OK, let data = output.data else {
            throw failure("finish the image sequence")
        }
        MovieHeaderTimes.clear(in: UnsafeMutableRawBufferPointer(start: data, count: output.size))
        return Data(bytesNoCopy: data, count: output.size, deallocator: .custom { pointer, _ in avifFree(pointer) })
    }

    /// Throws unless the image is whole frames of `frameHeight` rows, each small enough for AV1.
    private func checkFrames(of frameHeight: Int) throws(VipsError) {
        guard frameHeight > 0, height % frameHeight == 0 else {
            throw VipsError(operation: "avif", message: "\(height) rows are not whole frames of \(frameHeight) rows")
        }
        guard width <= AVIFEncoding.mostSide, frameHeight <= AVIFEncoding.mostSide else {
            throw VipsError(
                operation: "avif",
                message: "\(width)×\(frameHeight) is too large for AVIF: AV1 codes at most \(AVIFEncoding.mostSide) pixels a side")
        }
    }

    /// The sequence's timescale: durations are counted in milliseconds, as frame delays are.
    static let millisecondsPerSecond = 1000

    /// The delay of a frame that has none, in milliseconds: a tenth of a second, as browsers
    /// show a GIF frame whose delay is 0.
    public static let defaultDelay = 100

    /// The longest delay, in milliseconds, that browsers show a GIF or WebP frame for
    /// `defaultDelay` instead (as libvips' WebP saver, and the GIF encoder, write it), so that a
    /// sequence plays at the speed its input did, and its GIF and WebP files do.
    public static let shortestDelay = 10
}
