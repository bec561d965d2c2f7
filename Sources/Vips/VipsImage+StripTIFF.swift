import CTIFF
import CVips
import Foundation

/// Reading a large stripped TIFF with its strips decoded ahead, on threads of their own.
///
/// libvips' TIFF loader decodes strips one after another on the thread that asks for rows, so a
/// big LZW or Deflate TIFF is decoded on one core however many are idle: on a 1-gigapixel LZW
/// TIFF two thirds of the standard job's time went into libtiff's LZW decoder, with the second
/// core idle. Strips are compressed independently, so workers (each with its own libtiff
/// handle) decode the next strips while libvips resizes the rows of the current one; strips too
/// large to hold whole (very wide images, or one strip for the whole image) are read row by row
/// by one worker, a part of a strip at a time, still ahead of the resize. The pixels
/// are libtiff's, as libvips' loader gets them; only the plainest layouts are read this way (8
/// bits, grey or RGB with or without unassociated alpha, chunky, lossless compression), and a
/// file's faults are reported as libvips reports them: the render fails.
extension VipsImage {
    /// How the TIFF that `header` describes would be read with strips decoded ahead (what it
    /// would hold, and whether row by row), or nil when it is not a TIFF this reader takes or
    /// is too small to gain from it.
    ///
    /// - Parameters:
    ///   - path: the TIFF's path.
    ///   - header: libvips' header of the file (`open(file:)` without options).
    ///   - readAhead: the most the rows decoded ahead may hold (at least two groups of whole
    ///     strips are always allowed; strips larger than this are read row by row).
    public static func stripReadAhead(
        file path: String, header: VipsImage,
        readAhead: Int = StripTIFF.defaultReadAhead
    ) -> StripTIFF.Plan? {
        StripTIFF.Layout(.file(path), header: header, readAhead: readAhead).map(StripTIFF.Plan.init)
    }

    /// As `stripReadAhead(file:header:readAhead:)`, for TIFF bytes in memory (read where they are).
    public static func stripReadAhead(bytes: VipsBytes, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead) -> StripTIFF.Plan? {
        StripTIFF.layoutOf(bytes, header: header, readAhead: readAhead).map(StripTIFF.Plan.init)
    }

    /// The TIFF at `path` as an image whose rows are decoded ahead on worker threads (see
    /// `stripReadAhead(file:header:readAhead:)` for which files), carrying `header`'s metadata. Nil
    /// when it is not a TIFF this reader takes: libvips' loader should read it then. Rows are
    /// decoded ahead in order, top to bottom, so the image should be read once, sequentially, as
    /// a streaming resize on one libvips thread does (the pipeline's way); rows asked for after
    /// their strips were overwritten (by a thread far behind another, or out of order) are
    /// decoded again, which is right but slower.
    public static func readingStripsAhead(
        file path: String, header: VipsImage,
        readAhead: Int = StripTIFF.defaultReadAhead, name: String? = nil
    ) -> VipsImage? {
        guard let layout = StripTIFF.Layout(.file(path), header: header, readAhead: readAhead) else { return nil }
        return RowsAhead.image(
            RowsAhead.Reader(source: StripTIFF.Rows(origin: .file(path), layout: layout), name: name ?? path), header: header)
    }

    /// TIFF bytes (a fetched file) read as `readingStripsAhead(file:header:readAhead:)` reads a
    /// file, where `bytes` are, which the image keeps; `name` stands for the file in errors and
    /// in `stripReading(file:)`.
    public static func readingStripsAhead(
        bytes: VipsBytes, name: String, header: VipsImage,
        readAhead: Int = StripTIFF.defaultReadAhead
    ) -> VipsImage? {
        guard let layout = StripTIFF.layoutOf(bytes, header: header, readAhead: readAhead) else { return nil }
        return RowsAhead.image(RowsAhead.Reader(source: StripTIFF.Rows(origin: .bytes(bytes), layout: layout), name: name), header: header)
    }

    /// What the read-ahead readers (large TIFFs' strips, large PNGs' rows) have done with the
    /// file at `path` (or the bytes given that name) in this process, lately (see
    /// `RowsAhead.mostRecorded`): readers made, worker threads running now, and groups of rows
    /// decoded again because rows were asked for after their group was overwritten (a streaming
    /// resize on one thread asks for none).
    public static func readingAhead(file path: String) -> RowsAhead.Activity {
        RowsAhead.activity.withLock { $0[path] ?? RowsAhead.Activity() }
    }
}

/// The parts of the read-ahead TIFF reader: which files it takes, and the workers.
public enum StripTIFF {
    /// How a TIFF is read ahead.
    public struct Plan: Sendable, Equatable {
        /// What the reader holds: the rows decoded ahead, and the stored (compressed) strip
        /// each worker's libtiff handle reads whole.
        public var heldBytes: Int
        /// Whether strips are read row by row, a part of a strip at a time by one worker, as
        /// strips too large to hold whole are; otherwise whole strips, by up to two workers.
        public let rowByRow: Bool

        init(_ layout: Layout) {
            (heldBytes, rowByRow) = (layout.heldBytes, layout.readsScanlines)
        }
    }

    /// Compressions libtiff undoes to exactly the stored samples: LZW, Deflate (both tags),
    /// PackBits, LZMA, Zstandard. (Uncompressed strips cost little to read; JPEG is left to
    /// libvips, which handles its colour spaces.)
    static let lossless: Set<UInt16> = [5, 8, 32946, 32773, 34925, 50000]

    /// Below this many decoded bytes an image decodes quickly on one thread anyway.
    static let smallestImage = 8 << 20
    /// Strips are decoded in groups of at least this many rows, so that a file of one-row
    /// strips is not handed over a row at a time.
    static let groupRows = 64
    /// The most the groups in flight hold together by default (at least two groups are always
    /// allowed). Enough for three groups of a gigapixel TIFF's strips, so that two workers
    /// decode while libvips resizes: faster than one worker with two groups, and than libvips'
    /// own loader, for a peak a little above either.
    public static let defaultReadAhead = 48 << 20
    /// A strip larger than this (or than the read-ahead allowance) is read row by row rather
    /// than whole (two whole strips are held at once). Strips up to this size read whole run
    /// faster, and peak lower, than libvips' loader on the same file.
    static let largestGroup = 48 << 20

    /// How the file is cut into strips, and how the reader groups them.
    struct Layout: Sendable {
        let rowsPerStrip: Int
        let strips: Int
        /// Strips too large to hold whole are read row by row (`TIFFReadScanline`), in order,
        /// by one worker: a strip's compressed rows can only be decoded from its start.
        let readsScanlines: Bool
        /// The rows, grouped as whole strips, or as parts of a strip when read row by row.
        let geometry: RowsAhead.Geometry
        /// The largest strip as stored (compressed, cut to the file): libtiff reads a strip's
        /// stored bytes whole into each handle before decoding any of its rows.
        let largestStoredStrip: Int

        /// What the reader holds: its groups, and a stored strip in each worker's handle.
        var heldBytes: Int { geometry.slots * geometry.groupBytes + geometry.workers * largestStoredStrip }

        /// Nil unless libvips' header and the file's first directory both show a layout this
        /// reader takes.
        init?(_ origin: Origin, header: VipsImage, readAhead: Int) {
            guard header.loader?.hasPrefix("tiffload") == true, header.bandFormat == .uchar, (1...4).contains(header.bands),
                header.width * header.height * header.bands >= StripTIFF.smallestImage,
                let tiff = StripTIFF.open(origin)
            else { return nil }
            defer { TIFFClose(tiff) }
            var bits: UInt16 = 0, format: UInt16 = 0, samples: UInt16 = 0, planar: UInt16 = 0
            var photometric: UInt16 = 0, compression: UInt16 = 0
            var width: UInt32 = 0, height: UInt32 = 0, rowsPerStrip: UInt32 = 0
            guard TIFFIsTiled(tiff) == 0,
                pl_tiff_u32(tiff, UInt32(TIFFTAG_IMAGEWIDTH), &width) == 1, Int(width) == header.width,
                pl_tiff_u32(tiff, UInt32(TIFFTAG_IMAGELENGTH), &height) == 1, Int(height) == header.height,
                pl_tiff_u16(tiff, UInt32(TIFFTAG_BITSPERSAMPLE), &bits) == 1, bits == 8,
                pl_tiff_u16(tiff, UInt32(TIFFTAG_SAMPLEFORMAT), &format) == 1, format == UInt16(SAMPLEFORMAT_UINT),
                pl_tiff_u16(tiff, UInt32(TIFFTAG_SAMPLESPERPIXEL), &samples) == 1, Int(samples) == header.bands,
                pl_tiff_u16(tiff, UInt32(TIFFTAG_PLANARCONFIG), &planar) == 1, planar == UInt16(PLANARCONFIG_CONTIG),
                pl_tiff_u16(tiff, UInt32(TIFFTAG_PHOTOMETRIC), &photometric) == 1,
                pl_tiff_u16(tiff, UInt32(TIFFTAG_COMPRESSION), &compression) == 1, StripTIFF.lossless.contains(compression),
                pl_tiff_u32(tiff, UInt32(TIFFTAG_ROWSPERSTRIP), &rowsPerStrip) == 1, rowsPerStrip > 0
            else { return nil }
            guard Self.takesSamples(of: tiff, photometric: photometric, samples: Int(samples)) else { return nil }
            let rows = min(Int(rowsPerStrip), Int(height))
            let strips = (Int(height) + rows - 1) / rows
            let rowBytes = Int(width) * Int(samples)
            guard Int(TIFFNumberOfStrips(tiff)) == strips, Int(TIFFStripSize64(tiff)) == rows * rowBytes,
                Int(TIFFScanlineSize64(tiff)) == rowBytes
            else { return nil }
            (self.rowsPerStrip, self.strips) = (rows, strips)
            let groupRows: Int, slots: Int
            (readsScanlines, groupRows, slots) = Self.grouping(rows: rows, rowBytes: rowBytes, strips: strips, readAhead: readAhead)
            geometry = RowsAhead.Geometry(
                width: Int(width), height: Int(height), samples: Int(samples), groupRows: groupRows,
                slots: slots, workers: readsScanlines ? 1 : min(2, slots - 1))
            let fileBytes = Int(clamping: pl_tiff_file_size(tiff))
            largestStoredStrip = (0..<strips).reduce(0) { largest, strip in
                max(largest, min(Int(clamping: TIFFGetStrileByteCount(tiff, UInt32(strip))), fileBytes))
            }
            guard geometry.groups >= 2 else { return nil }
        }

        /// Whether the file's samples are grey or RGB, any extra one an unassociated alpha
        /// (libvips would premultiply or convert the others).
        private static func takesSamples(of tiff: OpaquePointer, photometric: UInt16, samples: Int) -> Bool {
            let colours: Int
            switch Int32(photometric) {
            case PHOTOMETRIC_MINISBLACK: colours = 1
            case PHOTOMETRIC_RGB: colours = 3
            default: return false
            }
            switch samples - colours {
            case 0:
                return true
            case 1:
                var extraCount: UInt16 = 0
                var extraKinds: UnsafePointer<UInt16>?
                guard pl_tiff_extra_samples(tiff, &extraCount, &extraKinds) == 1, extraCount == 1, let kind = extraKinds?.pointee,
                    Int32(kind) == EXTRASAMPLE_UNASSALPHA || Int32(kind) == EXTRASAMPLE_UNSPECIFIED
                else { return false }
            default:
                return false
            }
            return true
        }

        /// Whether a strip is read row by row, and the rows of a group and the groups held.
        private static func grouping(
            rows: Int, rowBytes: Int, strips: Int, readAhead: Int
        ) -> (readsScanlines: Bool, groupRows: Int, slots: Int) {
            let stripBytes = rows * rowBytes
            let stripsPerGroup = max(1, min((StripTIFF.groupRows + rows - 1) / rows, StripTIFF.largestGroup / stripBytes))
            // Row by row also when whole strips would make fewer than two groups (one strip for
            // the whole image, say): the worker then still decodes ahead of the resize.
            let readsScanlines = stripBytes > min(StripTIFF.largestGroup, readAhead) || strips <= stripsPerGroup
            let groupRows: Int, slots: Int
            if readsScanlines {
                // Parts of a strip, a sixteenth of the read-ahead each (one row at the least), in
                // three slots: the one libvips copies from, the one the worker decodes into and
                // one decoded ahead. More did not run faster (one worker decodes them all), and
                // every row held is full width, as are libvips' own buffers for such an image.
                groupRows = max(1, min(rows, readAhead / 16 / rowBytes))
                slots = 3
            } else {
                groupRows = rows * stripsPerGroup
                slots = max(2, min(8, readAhead / (groupRows * rowBytes)))
            }
            return (readsScanlines, groupRows, slots)
        }
    }

    /// The layout of TIFF bytes in memory, read in place (not copied).
    static func layoutOf(_ bytes: VipsBytes, header: VipsImage, readAhead: Int) -> Layout? {
        Layout(.bytes(bytes), header: header, readAhead: readAhead)
    }

    /// Where a TIFF's bytes are, for libtiff handles to read: a file each handle opens, or
    /// bytes in memory each handle reads in place.
    enum Origin: @unchecked Sendable {
        case file(String)
        /// Bytes in memory, kept alive by whoever holds the origin.
        case bytes(VipsBytes)
    }

    /// A libtiff handle of its own on `origin` (each thread needs one), or nil.
    static func open(_ origin: Origin) -> OpaquePointer? {
        switch origin {
        // Read, not mapped ("m"), as libvips' loader reads: libtiff then tolerates what it
        // tolerates there (a strip byte count past the end of the file is cut to the file).
        case .file(let path): TIFFOpen(path, "rm")
        case .bytes(let bytes): bytes.base.flatMap { pl_tiff_open_memory($0, bytes.count) }
        }
    }

    /// Decodes the rows of group `group` into `buffer` (`layout.geometry.groupBytes` long); nil on
    /// success, or what went wrong.
    static func decode(group: Int, of layout: Layout, with tiff: OpaquePointer, into buffer: UnsafeMutableRawPointer) -> String? {
        let top = group * layout.geometry.groupRows
        let bottom = min(top + layout.geometry.groupRows, layout.geometry.height)
        guard layout.readsScanlines else {
            for strip in top / layout.rowsPerStrip..<(bottom + layout.rowsPerStrip - 1) / layout.rowsPerStrip {
                let rows = min(layout.rowsPerStrip, layout.geometry.height - strip * layout.rowsPerStrip)
                let expected = rows * layout.geometry.rowBytes
                let offset = (strip * layout.rowsPerStrip - top) * layout.geometry.rowBytes
                let decoded = TIFFReadEncodedStrip(tiff, UInt32(strip), buffer + offset, tmsize_t(expected))
                guard decoded == expected else {
                    return "strip \(strip) of \(layout.strips) could not be decoded (libtiff gave \(max(decoded, 0)) of \(expected) bytes)"
                }
            }
            return nil
        }
        // A strip's rows decode only in order from its start (libtiff cannot skip ahead in LZW
        // or Deflate), so a handle not already at `top` first decodes the rows before it, into
        // the buffer's first row. A worker going down the image always is at `top`.
        let strip = top / layout.rowsPerStrip
        let stripTop = strip * layout.rowsPerStrip
        let current = Int(TIFFCurrentRow(tiff))
        let resume = Int(TIFFCurrentStrip(tiff)) == strip && (stripTop...top).contains(current) ? current : stripTop
        for row in resume..<bottom {
            let into = row < top ? buffer : buffer + (row - top) * layout.geometry.rowBytes
            guard TIFFReadScanline(tiff, into, UInt32(row), 0) == 1 else {
                return "row \(row) in strip \(row / layout.rowsPerStrip) of \(layout.strips) could not be decoded"
            }
        }
        return nil
    }

    /// A TIFF's rows for the reader: a libtiff handle per thread, and strips (or rows) through it.
    struct Rows: RowsAhead.Source {
        let origin: Origin
        let layout: Layout

        var geometry: RowsAhead.Geometry { layout.geometry }
        var loader: String { "tiffload" }

        func open() -> OpaquePointer? { StripTIFF.open(origin) }
        func close(_ handle: OpaquePointer) { TIFFClose(handle) }
        func decode(group: Int, with handle: OpaquePointer, into buffer: UnsafeMutableRawPointer) -> String? {
            StripTIFF.decode(group: group, of: layout, with: handle, into: buffer)
        }
    }
}
