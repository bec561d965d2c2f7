import CSPNG
import CVips
import Foundation

/// Reading a large PNG row by row with libspng, on a thread of its own, ahead of the resize.
///
/// A PNG too large to read whole (see `decodeWholePNG`) streams through libvips' loader, which
/// decodes on the thread that asks for rows and keeps about 518 full-width rows in its own
/// buffers (measured with libvips 8.14: 310 MB for a 200000-pixel-wide RGB PNG, where the
/// resize needs a few). Here one worker decodes the next rows with libspng's progressive
/// decoder (its rows only come in order) into a few groups while libvips resizes the current
/// ones. The same PNGs as the whole-PNG reader takes (8 bits, grey or RGB with or without
/// alpha, not interlaced, no transparency chunk); the pixels are those libvips' loader gives
/// (`PNGRowsTests` compares them). A row that does not decode fails the render, naming it.
extension VipsImage {
    /// What reading the PNG at `path`, which `header` (libvips' header of it) describes, with
    /// rows decoded ahead would hold (three groups of rows), or nil when it is not a PNG this
    /// reader takes or is too small to gain from it.
    public static func pngRowsAheadBytes(file path: String, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead) -> Int? {
        PNGRows.geometry(file: path, header: header, readAhead: readAhead).map { $0.slots * $0.groupBytes }
    }

    /// As `pngRowsAheadBytes(file:header:readAhead:)`, for PNG bytes in memory (the copy
    /// `readingPNGRowsAhead(data:name:header:readAhead:)` makes of them is not counted).
    public static func pngRowsAheadBytes(data: Data, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead) -> Int? {
        PNGRows.geometry(data: data, header: header, readAhead: readAhead).map { $0.slots * $0.groupBytes }
    }

    /// The PNG at `path` as an image whose rows one worker decodes ahead (see
    /// `pngRowsAheadBytes(file:header:readAhead:)` for which files), carrying `header`'s
    /// metadata; nil when it is not a PNG this reader takes: libvips' loader should read it then.
    /// Rows are decoded in order, so the image should be read once, top to bottom; rows asked
    /// for again after their group was overwritten are decoded again from the top of the file.
    public static func readingPNGRowsAhead(file path: String, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead) -> VipsImage? {
        guard let geometry = PNGRows.geometry(file: path, header: header, readAhead: readAhead) else { return nil }
        return RowsAhead.image(RowsAhead.Reader(source: PNGRows.Rows(path: path, copy: nil, geometry: geometry), name: path), header: header)
    }

    /// PNG bytes (a fetched file) read as `readingPNGRowsAhead(file:header:readAhead:)` reads a
    /// file, from a copy that the image keeps; `name` stands for the file in errors and in
    /// `readingAhead(file:)`.
    public static func readingPNGRowsAhead(data: Data, name: String, header: VipsImage,
                                           readAhead: Int = StripTIFF.defaultReadAhead) -> VipsImage? {
        guard let geometry = PNGRows.geometry(data: data, header: header, readAhead: readAhead),
              let copy = RowsAhead.MemoryCopy(data) else { return nil }
        return RowsAhead.image(RowsAhead.Reader(source: PNGRows.Rows(path: nil, copy: copy, geometry: geometry), name: name), header: header)
    }
}

/// The parts of the PNG rows reader.
enum PNGRows {
    /// Groups of a thirty-second of the read-ahead (one row at the least) in three slots: the
    /// one libvips copies from, the one the worker decodes into, and one decoded ahead. (Half
    /// what a TIFF read row by row takes: libspng holds rows of its own, and a 200000-pixel-wide
    /// PNG went from 153 to 148 MiB at the same speed; the TIFF's rows ran slower so.) Nil below
    /// the size worth a thread (as for TIFFs), or when the image would be one group.
    static func geometry(_ shape: WholePNG.Shape, readAhead: Int) -> RowsAhead.Geometry? {
        guard shape.rowBytes * shape.height >= StripTIFF.smallestImage else { return nil }
        let groupRows = max(1, min(shape.height, readAhead / 32 / shape.rowBytes))
        guard (shape.height + groupRows - 1) / groupRows >= 2 else { return nil }
        return RowsAhead.Geometry(width: shape.width, height: shape.height, samples: shape.channels,
                                  groupRows: groupRows, slots: 3, workers: 1)
    }

    /// The geometry for the PNG file at `path`, once its own IHDR agrees with `header`.
    static func geometry(file path: String, header: VipsImage, readAhead: Int) -> RowsAhead.Geometry? {
        guard let shape = WholePNG.Shape(header), WholePNG.fileAgrees(path, with: shape) else { return nil }
        return geometry(shape, readAhead: readAhead)
    }

    /// The geometry for PNG bytes in memory, once their IHDR (bytes 16 to 28) agrees with `header`.
    static func geometry(data: Data, header: VipsImage, readAhead: Int) -> RowsAhead.Geometry? {
        guard let shape = WholePNG.Shape(header), data.count >= 29, WholePNG.headerAgrees(Array(data[16..<29]), with: shape) else { return nil }
        return geometry(shape, readAhead: readAhead)
    }

    /// A PNG's rows for the reader: a libspng decoder per thread, reading the file (or the copy).
    struct Rows: RowsAhead.Source {
        let path: String?
        let copy: RowsAhead.MemoryCopy?
        let geometry: RowsAhead.Geometry
        var loader: String { "pngload" }

        func open() -> OpaquePointer? {
            let rows = if let path { pl_png_rows_open(path, nil, 0) } else { copy.flatMap { pl_png_rows_open(nil, $0.base, $0.count) } }
            return rows.map { OpaquePointer($0) }
        }

        func close(_ handle: OpaquePointer) {
            pl_png_rows_close(UnsafeMutablePointer<PlPNGRows>(handle))
        }

        func decode(group: Int, with handle: OpaquePointer, into buffer: UnsafeMutableRawPointer) -> String? {
            let first = group * geometry.groupRows
            let end = min(first + geometry.groupRows, geometry.height)
            var failedRow: Int32 = 0
            let error = withExtendedLifetime(copy) {
                pl_png_rows_decode(UnsafeMutablePointer<PlPNGRows>(handle), Int32(first), Int32(end),
                                   buffer.assumingMemoryBound(to: UInt8.self), geometry.rowBytes, &failedRow)
            }
            guard error == 0 else {
                return "row \(failedRow) of \(geometry.height) could not be decoded (libspng: \(String(cString: spng_strerror(error))))"
            }
            return nil
        }
    }
}
