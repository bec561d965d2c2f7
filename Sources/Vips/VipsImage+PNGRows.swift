import CDeflate
import CISAL
import CVips
import Foundation

/// Reading a large PNG row by row, on a thread of its own, ahead of the resize.
///
/// A PNG too large to read whole (see `decodeWholePNG`) streams through libvips' loader, which
/// decodes on the thread that asks for rows and keeps hundreds of full-width rows in its own
/// buffers (libvips 8.14; the resize needs a few), and inflates with zlib. Here one worker
/// decodes the next rows into a
/// few groups while libvips resizes the current ones: the image data inflated piece by piece by
/// ISA-L (at about the speed libdeflate inflates a whole PNG, twice zlib's), the filters undone
/// as the whole-PNG reader undoes them (rows come only in order). The same PNGs as the
/// whole-PNG reader takes (8 bits, grey or RGB with or without alpha, not interlaced, no
/// transparency chunk); the pixels are those libvips' loader gives (`PNGRowsTests` compares
/// them). A row that does not decode fails the render, naming it.
extension VipsImage {
    /// What reading the PNG at `path`, which `header` (libvips' header of it) describes, with
    /// rows decoded ahead would hold (three groups of rows, and the worker's group of rows as
    /// inflated, with its input), or nil when it is not a PNG this reader takes or is too small
    /// to gain from it.
    public static func pngRowsAheadBytes(file path: String, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead) -> Int? {
        PNGRows.geometry(file: path, header: header, readAhead: readAhead).map(PNGRows.heldBytes)
    }

    /// As `pngRowsAheadBytes(file:header:readAhead:)`, for PNG bytes in memory (read where
    /// they are, not copied).
    public static func pngRowsAheadBytes(bytes: VipsBytes, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead) -> Int? {
        PNGRows.geometry(bytes: bytes, header: header, readAhead: readAhead).map(PNGRows.heldBytes)
    }

    /// The PNG at `path` as an image whose rows one worker decodes ahead (see
    /// `pngRowsAheadBytes(file:header:readAhead:)` for which files), carrying `header`'s
    /// metadata; nil when it is not a PNG this reader takes: libvips' loader should read it then.
    /// Rows are decoded in order, so the image should be read once, top to bottom; rows asked
    /// for again after their group was overwritten are decoded again from the top of the file.
    public static func readingPNGRowsAhead(
        file path: String, header: VipsImage, readAhead: Int = StripTIFF.defaultReadAhead,
        name: String? = nil
    ) -> VipsImage? {
        guard let geometry = PNGRows.geometry(file: path, header: header, readAhead: readAhead) else { return nil }
        return RowsAhead.image(
            RowsAhead.Reader(source: PNGRows.Rows(path: path, bytes: nil, geometry: geometry), name: name ?? path), header: header)
    }

    /// PNG bytes (a fetched file) read as `readingPNGRowsAhead(file:header:readAhead:)` reads a
    /// file, where `bytes` are, which the image keeps (several readers of one fetched file
    /// share them); `name` stands for the file in errors and in `readingAhead(file:)`.
    public static func readingPNGRowsAhead(
        bytes: VipsBytes, name: String, header: VipsImage,
        readAhead: Int = StripTIFF.defaultReadAhead
    ) -> VipsImage? {
        guard let geometry = PNGRows.geometry(bytes: bytes, header: header, readAhead: readAhead) else { return nil }
        return RowsAhead.image(
            RowsAhead.Reader(source: PNGRows.Rows(path: nil, bytes: bytes, geometry: geometry), name: name), header: header)
    }
}

/// The parts of the PNG rows reader.
enum PNGRows {
    /// Groups of a thirty-second of the read-ahead (one row at the least) in three slots: the
    /// one libvips copies from, the one the worker decodes into, and one decoded ahead. (Half
    /// what a TIFF read row by row takes: the worker holds a group of its own as inflated, and
    /// a very wide PNG peaks lower at the same speed; the TIFF's rows ran slower so.) Nil below
    /// the size worth a thread (as for TIFFs), or when the image would be
    /// one group.
    static func geometry(_ shape: WholePNG.Shape, readAhead: Int) -> RowsAhead.Geometry? {
        guard shape.rowBytes * shape.height >= StripTIFF.smallestImage else { return nil }
        let groupRows = max(1, min(shape.height, readAhead / 32 / shape.rowBytes))
        // ISA-L counts a call's output in 32 bits: a group as inflated must fit (libvips' widths do).
        guard (shape.height + groupRows - 1) / groupRows >= 2, groupRows * (shape.rowBytes + 1) <= Int(UInt32.max) else { return nil }
        return RowsAhead.Geometry(
            width: shape.width, height: shape.height, samples: shape.channels,
            groupRows: groupRows, slots: 3, workers: 1)
    }

    /// What the reader holds: the slots, and each worker's `Stream`.
    static func heldBytes(_ geometry: RowsAhead.Geometry) -> Int {
        geometry.slots * geometry.groupBytes + geometry.workers * Stream.heldBytes(geometry)
    }

    /// The geometry for the PNG file at `path`, once its own IHDR agrees with `header`.
    static func geometry(file path: String, header: VipsImage, readAhead: Int) -> RowsAhead.Geometry? {
        guard let shape = WholePNG.Shape(header), WholePNG.fileAgrees(path, with: shape) else { return nil }
        return geometry(shape, readAhead: readAhead)
    }

    /// The geometry for PNG bytes in memory, once their IHDR (bytes 16 to 28) agrees with `header`.
    static func geometry(bytes: VipsBytes, header: VipsImage, readAhead: Int) -> RowsAhead.Geometry? {
        guard let shape = WholePNG.Shape(header), bytes.count >= 29,
            WholePNG.headerAgrees(bytes.withUnsafeBytes { Array($0[16..<29]) }, with: shape)
        else { return nil }
        return geometry(shape, readAhead: readAhead)
    }

    /// A PNG's rows for the reader: a `Stream` per thread, reading the file (or the bytes).
    struct Rows: RowsAhead.Source {
        let path: String?
        let bytes: VipsBytes?
        let geometry: RowsAhead.Geometry
        var loader: String { "pngload" }

        func open() -> OpaquePointer? {
            let stream = if let path { Stream(file: path, geometry: geometry) } else { bytes.map { Stream(bytes: $0, geometry: geometry) } }
            return stream.map { OpaquePointer(Unmanaged.passRetained($0).toOpaque()) }
        }

        func close(_ handle: OpaquePointer) {
            Unmanaged<Stream>.fromOpaque(UnsafeRawPointer(handle)).release()
        }

        func decode(group: Int, with handle: OpaquePointer, into buffer: UnsafeMutableRawPointer) -> String? {
            let stream = Unmanaged<Stream>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
            let first = group * geometry.groupRows
            let end = min(first + geometry.groupRows, geometry.height)
            return stream.decode(rows: first..<end, into: buffer.assumingMemoryBound(to: UInt8.self))
                .map { "row \($0.row) of \(geometry.height) could not be decoded (\($0.reason))" }
        }
    }

    /// One PNG's rows, decoded in order: the chunks are read as the rows need them, their image
    /// data inflated piece by piece by ISA-L, the filters undone as the whole-PNG reader undoes
    /// them. Rows asked for before the next one start again from the top of the file.
    ///
    /// Faults end the rows where libpng (libvips' loader) ends them: a critical chunk whose CRC
    /// does not match, a critical chunk PNG does not have, image data that is damaged or ends
    /// before the last row, a filter PNG does not have.
    final class Stream {
        struct Failure: Error {
            let row: Int
            let reason: String
        }

        private let geometry: RowsAhead.Geometry
        /// The file, or the bytes in memory (kept alive here).
        private let descriptor: Int32
        private let bytes: VipsBytes?
        /// Where the next chunk header or payload byte is read.
        private var position = 0
        private let inflater = UnsafeMutablePointer<inflate_state>.allocate(capacity: 1)
        /// File reads land here; bytes in memory are inflated where they are.
        private let input: UnsafeMutableRawPointer?
        private static let inputBytes = 64 << 10
        /// The image data chunk being read: its payload bytes not yet read, the CRC so far.
        private var chunkLeft = 0
        private var chunkCRC: UInt32 = 0
        /// Whether an image data chunk's payload is being read (its CRC follows), and whether
        /// one was at all (any other chunk after them ends the image data).
        private var inImageDataChunk = false
        private var imageDataStarted = false
        /// Rows inflated with their filter bytes, a group at a time.
        private let filtered: UnsafeMutablePointer<UInt8>
        /// The last row unfiltered (zeros above the first), and a row to unfilter skipped rows into.
        private let above: UnsafeMutablePointer<UInt8>
        private let spare: UnsafeMutablePointer<UInt8>
        private var nextRow = 0

        private init(geometry: RowsAhead.Geometry, descriptor: Int32, bytes: VipsBytes?) {
            (self.geometry, self.descriptor, self.bytes) = (geometry, descriptor, bytes)
            input = descriptor >= 0 ? UnsafeMutableRawPointer.allocate(byteCount: Self.inputBytes, alignment: 64) : nil
            filtered = .allocate(capacity: geometry.groupRows * (geometry.rowBytes + 1))
            above = .allocate(capacity: geometry.rowBytes)
            spare = .allocate(capacity: geometry.rowBytes)
        }

        /// A group of rows as inflated (a filter byte each), two rows, the input and the inflater.
        static func heldBytes(_ geometry: RowsAhead.Geometry) -> Int {
            geometry.groupRows * (geometry.rowBytes + 1) + 2 * geometry.rowBytes + inputBytes + MemoryLayout<inflate_state>.size
        }

        convenience init?(file path: String, geometry: RowsAhead.Geometry) {
            let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            self.init(geometry: geometry, descriptor: descriptor, bytes: nil)
        }

        convenience init(bytes: VipsBytes, geometry: RowsAhead.Geometry) {
            self.init(geometry: geometry, descriptor: -1, bytes: bytes)
        }

        deinit {
            if descriptor >= 0 { Foundation.close(descriptor) }
            inflater.deallocate()
            input?.deallocate()
            filtered.deallocate()
            above.deallocate()
            spare.deallocate()
        }

        /// Decodes `rows` into `out`, one row after another (`geometry.rowBytes` each); nil, or
        /// the row that did not decode and why.
        func decode(rows: Range<Int>, into out: UnsafeMutablePointer<UInt8>) -> Failure? {
            if nextRow > rows.lowerBound || nextRow == 0 { restart() }
            while nextRow < rows.upperBound {
                let count = min(geometry.groupRows, rows.upperBound - nextRow)
                if let failure = decode(
                    count: count,
                    into: { row in
                        rows.contains(row) ? out + (row - rows.lowerBound) * self.geometry.rowBytes : nil
                    })
                {
                    // Whatever is asked next starts from the top again, and meets the fault again.
                    nextRow = .max
                    return failure
                }
            }
            return nil
        }

        /// Back to the first row: past the signature and the header (which `geometry` was made
        /// from, so it is not read again), inflating from the start.
        private func restart() {
            position = 8 + 8 + 13 + 4
            nextRow = 0
            (chunkLeft, chunkCRC, inImageDataChunk, imageDataStarted) = (0, 0, false, false)
            isal_inflate_init(inflater)
            inflater.pointee.crc_flag = UInt32(ISAL_ZLIB)
            above.initialize(repeating: 0, count: geometry.rowBytes)
        }

        /// Inflates the next `count` rows and undoes their filters into the row `destination`
        /// gives for each (nil: a row before those asked for, unfiltered into a spare row).
        private func decode(count: Int, into destination: (Int) -> UnsafeMutablePointer<UInt8>?) -> Failure? {
            let stride = geometry.rowBytes + 1
            inflater.pointee.next_out = filtered
            inflater.pointee.avail_out = UInt32(count * stride)
            // The row the inflated bytes have reached: the one a fault is in.
            let reached = { self.nextRow + (count * stride - Int(self.inflater.pointee.avail_out)) / stride }
            var starved = false
            while inflater.pointee.avail_out > 0 {
                // ISA-L keeps the end of its input back: with none left it may still have rows to
                // give, so more is read only once a call with none gave nothing.
                if starved, let reason = readImageData() {
                    return Failure(row: reached(), reason: reason)
                }
                let before = inflater.pointee.avail_out
                let result = isal_inflate(inflater)
                let row = reached()
                guard result == ISAL_DECOMP_OK || result == ISAL_END_INPUT || result == ISAL_OUT_OVERFLOW else {
                    return Failure(row: row, reason: "damaged image data (ISA-L inflate: \(result))")
                }
                if inflater.pointee.block_state == ISAL_BLOCK_FINISH, inflater.pointee.avail_out > 0 {
                    return Failure(row: row, reason: "the image data ends before the last row")
                }
                starved = inflater.pointee.avail_in == 0 && inflater.pointee.avail_out == before
            }
            var previous = UnsafePointer(above)
            for index in 0..<count {
                let row = nextRow + index
                let into = destination(row) ?? (previous == UnsafePointer(spare) ? above : spare)
                guard
                    WholePNG.unfilterRow(
                        filtered + index * stride, above: previous, into: into,
                        rowBytes: geometry.rowBytes, pixelBytes: geometry.samples)
                else {
                    return Failure(row: row, reason: "unknown filter \(filtered[index * stride])")
                }
                previous = UnsafePointer(into)
            }
            // The next group's first row needs this one's last above it, wherever that was written.
            if previous != UnsafePointer(above) { above.update(from: previous, count: geometry.rowBytes) }
            nextRow += count
            return nil
        }

        /// Gives the inflater the next piece of image data, reading chunks as needed; nil, or
        /// why there is none.
        private func readImageData() -> String? {
            while chunkLeft == 0 {
                if inImageDataChunk {
                    guard let stored = readWord() else { return "the file ends inside its image data" }
                    guard stored == chunkCRC else { return "an image data chunk's CRC does not match" }
                    inImageDataChunk = false
                }
                guard let length = readWord(), let type = readWord() else { return "the file ends inside its image data" }
                let letters = withUnsafeBytes(of: type.bigEndian) { Array($0) }
                guard length <= 0x7FFF_FFFF, letters.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) }) else {
                    return "a chunk after the header is not a PNG chunk"
                }
                let name = String(decoding: letters, as: UTF8.self)
                if name == "IDAT" {
                    (inImageDataChunk, imageDataStarted, chunkLeft) = (true, true, Int(length))
                    chunkCRC = letters.withUnsafeBytes { UInt32(libdeflate_crc32(0, $0.baseAddress, 4)) }
                    continue
                }
                if imageDataStarted { return "the image data ends before the last row" }
                // Before the image data: ancillary chunks and a suggested palette are skipped
                // (libpng drops those with a bad CRC); any other critical chunk is an error.
                guard name == "PLTE" || !(65...90).contains(letters[0]) else { return "an unexpected \(name) chunk" }
                position += Int(length) + 4
            }
            let count = min(chunkLeft, Self.inputBytes)
            guard let piece = next(count, into: input) else { return "the file ends inside its image data" }
            chunkCRC = UInt32(libdeflate_crc32(chunkCRC, piece, count))
            chunkLeft -= count
            inflater.pointee.next_in = UnsafeMutablePointer(mutating: piece.assumingMemoryBound(to: UInt8.self))
            inflater.pointee.avail_in = UInt32(count)
            return nil
        }

        /// A big-endian 32-bit word at `position`, or nil at the end of the file.
        private func readWord() -> UInt32? {
            var word: UInt32 = 0
            let value = withUnsafeMutableBytes(of: &word) { next(4, into: $0.baseAddress)?.loadUnaligned(as: UInt32.self) }
            return value.map { UInt32(bigEndian: $0) }
        }

        /// The `count` bytes at `position`, which it passes: read from the file into `scratch`, or
        /// where they lie in memory; nil at the end of the file.
        private func next(_ count: Int, into scratch: UnsafeMutableRawPointer?) -> UnsafeRawPointer? {
            guard let bytes else {
                guard let scratch, readFully(into: scratch, count: count) else { return nil }
                return UnsafeRawPointer(scratch)
            }
            guard let base = bytes.base, position + count <= bytes.count else { return nil }
            defer { position += count }
            return base + position
        }

        /// Reads `count` bytes of the file at `position` into `buffer`; false at the end of the file.
        private func readFully(into buffer: UnsafeMutableRawPointer, count: Int) -> Bool {
            var done = 0
            while done < count {
                let read = pread(descriptor, buffer + done, count - done, off_t(position + done))
                if read < 0, errno == EINTR { continue }
                guard read > 0 else { return false }
                done += read
            }
            position += count
            return true
        }
    }
}
