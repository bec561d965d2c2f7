import Vips

/// Reads a large stripped TIFF with its strips decoded ahead of the resize by worker threads
/// (`VipsImage.readingStripsAhead`), when it is of a layout that reader takes and decoding is
/// strict enough (`DecompressSettings.FailOn.allowsReadingAhead`). Through libvips' loader,
/// libtiff's LZW decoder keeps one core busy while the other waits (Benchmarks/RESULTS.md).
struct TIFFStripsAheadReader: FastReader {
    /// The input's strictness: other settings leave TIFFs to libvips' loader.
    let failOn: DecompressSettings.FailOn
    /// What the strips decoded ahead may hold (`MemoryAccountant.readAhead`).
    let readAhead: Int

    /// How `source` would be read with strips decoded ahead, its held bytes counting what the
    /// reader holds besides the decode (the rows in flight, the stored strip; fetched bytes are
    /// read where they are); nil when libvips' loader reads it. `explain` shows it.
    func plan(_ source: EncodedSource, header: VipsImage) -> StripTIFF.Plan? {
        guard failOn.allowsReadingAhead else { return nil }
        switch source {
        case .file(let path, _, _, _):
            return VipsImage.stripReadAhead(file: path, header: header, readAhead: readAhead)
        case .memory(let bytes):
            return VipsImage.stripReadAhead(bytes: bytes, header: header, readAhead: readAhead)
        }
    }

    /// The plan's held bytes, worked out through the gate on libvips' error buffer
    /// (`LibvipsErrorText.gate`), as libtiff reports into it.
    func heldBytes(_ source: EncodedSource, header: VipsImage) -> Int64 {
        Int64(LibvipsErrorText.gate.shared { plan(source, header: header) }?.heldBytes ?? 0)
    }

    /// The TIFF as an image whose strips are decoded ahead; nil leaves it to libvips' loader.
    /// Fetched bytes are copied for the reader (the TIFF's file size again, while it is read).
    func read(_ source: EncodedSource, header: VipsImage, pass: DecodePass) -> FastRead? {
        guard failOn.allowsReadingAhead else { return nil }
        let image =
            switch source {
            case .file(let path, _, _, let name): VipsImage.readingStripsAhead(file: path, header: header, readAhead: readAhead, name: name)
            case .memory(let bytes):
                VipsImage.readingStripsAhead(bytes: bytes, name: EncodedSource.fetchedName, header: header, readAhead: readAhead)
            }
        return image.map { FastRead(image: $0) }
    }
}
