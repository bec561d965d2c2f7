import Vips

/// Reads a large PNG not read whole (its allowance was full, or it is larger than the
/// allowance) with its rows decoded ahead of the resize by a worker thread, inflated by ISA-L
/// (`VipsImage.readingPNGRowsAhead`), when it is of a layout that reader takes and decoding is
/// strict enough (`DecompressSettings.FailOn.allowsReadingAhead`). libvips' loader keeps many
/// full-width rows of a very wide PNG, and inflates with zlib (Benchmarks/RESULTS.md).
struct PNGRowsAheadReader: FastReader {
    /// The input's strictness: other settings leave PNGs to libvips' loader.
    let failOn: DecompressSettings.FailOn
    /// What the rows decoded ahead may hold (`MemoryAccountant.readAhead`).
    let readAhead: Int

    /// What reading `source` with its rows decoded ahead would hold besides the decode: its
    /// groups of rows (fetched bytes are not copied); 0 when it is not a PNG this reader takes.
    /// Counted whether or not the PNG is then read whole instead (that has an allowance of its
    /// own).
    func heldBytes(_ source: EncodedSource, header: VipsImage) -> Int64 {
        guard failOn.allowsReadingAhead else { return 0 }
        switch source {
        case .file(let path, _, _, _):
            return Int64(VipsImage.pngRowsAheadBytes(file: path, header: header, readAhead: readAhead) ?? 0)
        case .memory(let bytes):
            return VipsImage.pngRowsAheadBytes(bytes: bytes, header: header, readAhead: readAhead).map(Int64.init) ?? 0
        }
    }

    /// The PNG as an image whose rows are decoded ahead; nil leaves it to libvips' loader.
    /// Fetched bytes are read where they are (the passes of a windowed decode share them).
    func read(_ source: EncodedSource, header: VipsImage, pass: DecodePass) -> FastRead? {
        guard failOn.allowsReadingAhead else { return nil }
        let image =
            switch source {
            case .file(let path, _, _, let name):
                VipsImage.readingPNGRowsAhead(file: path, header: header, readAhead: readAhead, name: name)
            case .memory(let bytes):
                VipsImage.readingPNGRowsAhead(bytes: bytes, name: EncodedSource.fetchedName, header: header, readAhead: readAhead)
            }
        return image.map { FastRead(image: $0) }
    }
}
