import Vips

/// A reader faster than libvips' own loader for the inputs it takes. The decoder asks its
/// readers in order (`ImageDecoder.fastReaders`) and the first that reads an input reads it;
/// when none does, libvips' loader reads it.
protocol FastReader: Sendable {
    /// What reading `source` (which `header`, libvips' header of it, describes) holds besides
    /// the decode, for the input's estimate: 0 when this reader would not take it, or when its
    /// reads have an allowance of their own.
    func heldBytes(_ source: EncodedSource, header: VipsImage) -> Int64

    /// `source` read for `pass`, or nil when this reader does not take it (not of a kind it
    /// reads, no room in its allowance, or a fault it found): the next reader is asked then.
    func read(_ source: EncodedSource, header: VipsImage, pass: DecodePass) -> FastRead?
}

/// What a decoding pass over the file makes, as the fast readers are told it.
enum DecodePass {
    /// The whole image, shrunk to `target`, the size the outputs fan out from.
    case whole(target: ImageSize)
    /// One output's window, cut from the rows as they stream.
    case window
}

/// An image a fast reader made, and what gives back its memory once the pass has rendered it.
struct FastRead {
    let image: VipsImage
    /// Called once the pass is done with `image`; gives back what the read holds.
    var release: () -> Void = {}
}

extension ImageDecoder {
    /// The fast readers, in the order they are asked: a PNG read whole when its allowance has
    /// room (the fastest), a still WebP by libwebp, a large TIFF's strips and a large PNG's
    /// rows decoded ahead on worker threads.
    var fastReaders: [any FastReader] {
        [wholePNGReader, WebPReader(), tiffStripsReader, pngRowsReader]
    }

    /// The reader of PNGs read whole, within this decoder's allowance.
    var wholePNGReader: WholePNGReader { WholePNGReader(allowance: wholePNGAllowance, fullSizeDecodes: fullSizeDecodes) }
    /// The reader of large TIFFs with strips decoded ahead, under this decoder's strictness.
    var tiffStripsReader: TIFFStripsAheadReader { TIFFStripsAheadReader(failOn: settings.failOn, readAhead: readAhead) }
    /// The reader of large PNGs with rows decoded ahead, under this decoder's strictness.
    var pngRowsReader: PNGRowsAheadReader { PNGRowsAheadReader(failOn: settings.failOn, readAhead: readAhead) }

    /// `source` read by the first fast reader that takes it, or nil: libvips' loader reads it.
    func fastRead(_ source: EncodedSource, header: VipsImage, pass: DecodePass) -> FastRead? {
        for reader in fastReaders {
            if let read = reader.read(source, header: header, pass: pass) { return read }
        }
        return nil
    }
}

extension DecompressSettings.FailOn {
    /// Whether large TIFFs and PNGs may be read with rows decoded ahead under this strictness:
    /// as strict as libvips' default or stricter, short of warnings (libtiff's warnings are not
    /// those readers' to judge).
    var allowsReadingAhead: Bool {
        self == .truncated || self == .error
    }
}

extension EncodedSource {
    /// What fetched bytes are called in the read-ahead readers' errors.
    static let fetchedName = "the fetched file"
}
