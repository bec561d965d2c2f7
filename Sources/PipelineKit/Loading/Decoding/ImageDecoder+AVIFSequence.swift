import Vips

/// Animated AVIF inputs (image sequences, brand `avis`), which libvips 8.14's HEIF loader does
/// not read: libavif reads them (`AVIFSequenceReader`). The header it describes stands in for a
/// libvips loader's, so that `maxPixels`, `maxFrames`, `animation` and the memory estimate apply
/// as they do to an animated GIF or WebP; the frames are then decoded here rather than by a pass
/// of libvips' loader.
extension ImageDecoder {
    /// Whether `source` is an AVIF image sequence, by its brand.
    static func isAVIFSequence(_ source: EncodedSource) -> Bool {
        switch source {
        case .file(let path, _, _, _): AVIFSequenceReader.isSequence(file: path)
        case .memory(let bytes): AVIFSequenceReader.isSequence(bytes: bytes)
        }
    }

    /// `source` opened by libavif, its container parsed and no frame decoded.
    static func avifSequenceReader(_ source: EncodedSource) throws(VipsError) -> AVIFSequenceReader {
        switch source {
        case .file(let path, _, _, _): try AVIFSequenceReader(file: path)
        case .memory(let bytes): try AVIFSequenceReader(bytes: bytes)
        }
    }

    /// The frames of an AVIF sequence, each shrunk to what the largest output needs and converted
    /// to sRGB, stacked top to bottom (one page a frame) with their delays and loop count, as
    /// `decodeAnimation` makes a GIF's or WebP's; only the first frame, as a still image, unless
    /// `keepsFrames`.
    func decodeAVIFSequence(_ source: EncodedSource, header: VipsImage, keepsFrames: Bool, deadline: VipsDeadline) throws
        -> DecodedImage
    {
        let size = header.size
        let frames = keepsFrames ? header.pageCount : 1
        if keepsFrames {
            try refuseOverMaxPixels(
                header.width * header.height * frames, described: "the animation is \(header.width)×\(header.height) × \(frames) frames")
        }
        let target = DecodePlan.decodeSize(stored: size, allowedShrink: allowedShrink(for: size))
        let reader = try Self.avifSequenceReader(source)
        // libavif's decode is not one libvips can stop: the deadline is looked at between frames.
        func checkDeadline() throws(VipsError) {
            if deadline.hasRunOut { throw VipsError(operation: "deadline", message: "the time limit of \(deadline.seconds) s has passed") }
        }
        let image: VipsImage
        var delays: [Int]
        if target == size {
            // Frames kept at their size are decoded straight into the memory they are kept in.
            try checkDeadline()
            let strip = try reader.nextFrames(frames)
            let converted = try Self.toSRGB(strip.image)
            image = converted.isInMemory ? converted : try deadline.render(converted)
            delays = strip.delays
        } else {
            // One frame at full size at a time, shrunk before the next is decoded.
            var shrunk: [VipsImage] = []
            delays = []
            for _ in 0..<frames {
                try checkDeadline()
                let frame = try reader.nextFrames(1)
                shrunk.append(try deadline.render(Self.toSRGB(frame.image.resampled(to: target))))
                delays += frame.delays
            }
            image = try shrunk.count == 1 ? shrunk[0] : deadline.render(VipsImage.stacking(shrunk))
        }
        var decoded = image
        if frames > 1 {
            decoded = try image.withPageHeight(target.height).settingFrameDelays(delays)
                .settingIntField("n-pages", to: frames).settingIntField("loop", to: reader.loop)
        }
        decoded.ownMetadata()
        return DecodedImage(image: decoded, originalSize: size, loader: AVIFSequenceReader.loader, shrink: 1, frameCount: frames)
    }
}

/// What a one-off command asks of a file before any run: how many frames it animates.
package enum AnimatedFile {
    /// The frames of the animated GIF, WebP or AVIF at `path`, a regular file, that `settings`
    /// keep, read from its header as a run reads it; nil for a still image, another format, or
    /// `animation` first.
    package static func frames(ofFile path: String, settings: DecompressSettings) -> Int? {
        let decoder = ImageDecoder(settings: settings, outputs: [])
        guard let header = try? decoder.openHeader(.file(path: path, byteCount: 0), options: ""), let loader = header.loader else {
            return nil
        }
        return decoder.keptFrames(header, loader: loader)
    }
}
