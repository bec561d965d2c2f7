import CTIFF
import Foundation
import TestSupport
import Testing
import Vips

extension OneAtATime {
    /// The read-ahead TIFF reader is checked against libvips' own TIFF loader reading the same
    /// files, written here with libtiff in the layouts the reader takes (and some it must leave to
    /// libvips): the pixels must be the same, faults must fail the read, and the worker threads
    /// must leave when the image goes.
    @Suite("Large TIFFs read with strips decoded ahead")
    struct StripTIFFTests {
        /// One case a band count: grey, grey and alpha, RGB, RGB and alpha, each with its own
        /// compression and strip height (one row a strip, strips that do not divide the height).
        @Test(arguments: [
            (1, COMPRESSION_LZW, 1),
            (2, COMPRESSION_ADOBE_DEFLATE, 7),
            (3, COMPRESSION_LZW, 128),
            (4, COMPRESSION_PACKBITS, 33),
        ])
        func readsLibvipsPixels(samples: Int, compression: Int32, rowsPerStrip: Int) throws {
            let tiff = try Self.written(samples: samples, compression: compression, rowsPerStrip: rowsPerStrip)
            let (path, width, height) = (tiff.path, tiff.width, tiff.height)

            let header = try VipsImage.open(file: path)
            // One libvips thread, as the pipeline runs (several may ask out of order, far apart).
            Vips.setThreadsPerImage(1)
            let image = try #require(VipsImage.readingStripsAhead(file: path, header: header), "declined \(samples) bands")
            #expect(image.width == width && image.height == height && image.bands == samples)
            #expect(try image.bytes() == VipsImage.open(file: path, options: "access=sequential").bytes())
            #expect(VipsImage.readingAhead(file: path).readers == 1)
            #expect(VipsImage.readingAhead(file: path).groupsDecodedAgain == 0, "read top to bottom, nothing is decoded twice")
        }

        /// Strips larger than the read-ahead allows (here 256 KB) are read row by row, a part of a
        /// strip at a time, by one worker: the same pixels, nothing decoded twice, and fewer rows
        /// held than a strip has. One case is a single strip for the whole image.
        @Test(arguments: [
            (3, COMPRESSION_LZW, 400),
            (1, COMPRESSION_ADOBE_DEFLATE, 6000),
            (4, COMPRESSION_PACKBITS, 333),
        ])
        func readsRowByRowWhenStripsAreLargerThanTheReadAhead(samples: Int, compression: Int32, rowsPerStrip: Int) throws {
            let tiff = try Self.written(samples: samples, compression: compression, rowsPerStrip: rowsPerStrip)
            let path = tiff.path
            let header = try VipsImage.open(file: path)
            Vips.setThreadsPerImage(1)
            let plan = try #require(VipsImage.stripReadAhead(file: path, header: header, readAhead: Self.smallReadAhead))
            #expect(plan.rowByRow)
            let held = plan.heldBytes
            // Decoded rows, and the stored strip libtiff reads whole.
            let stripBytes = min(rowsPerStrip, tiff.height) * tiff.width * samples
            let stored = try #require(tiff.strips.map(\.count).max())
            #expect(held < stripBytes + stored, "holds \(held) bytes, a strip is \(stripBytes) decoded, \(stored) stored")
            let image = try #require(VipsImage.readingStripsAhead(file: path, header: header, readAhead: Self.smallReadAhead))
            #expect(try image.bytes() == VipsImage.open(file: path, options: "access=sequential").bytes())
            #expect(VipsImage.readingAhead(file: path).groupsDecodedAgain == 0, "read top to bottom, nothing is decoded twice")
        }

        /// A read-ahead smaller than the test files' strips, so that they are read row by row.
        static let smallReadAhead = 256 << 10

        /// Bytes in memory (a fetched file) read as the file is, and a damaged copy fails with the
        /// name given for it.
        @Test func bytesReadAsTheFileIs() throws {
            let tiff = try Self.written(samples: 3, compression: COMPRESSION_ADOBE_DEFLATE, rowsPerStrip: 40)
            let (path, strips) = (tiff.path, tiff.strips)
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            Vips.setThreadsPerImage(1)
            let name = "fetched \(UUID().uuidString)"
            let image = try #require(
                VipsImage.readingStripsAhead(bytes: VipsBytes(data), name: name, header: try VipsImage.open(data: data)))
            #expect(try image.bytes() == VipsImage.open(file: path, options: "access=sequential").bytes())
            #expect(VipsImage.readingAhead(file: name).readers == 1 && VipsImage.readingAhead(file: name).groupsDecodedAgain == 0)

            data.replaceSubrange(strips[3].offset..<strips[3].offset + 64, with: Data(repeating: 0xFF, count: 64))
            let damaged = try #require(
                VipsImage.readingStripsAhead(bytes: VipsBytes(data), name: name, header: try VipsImage.open(data: data)))
            let error = try #require(throws: VipsError.self) { try damaged.bytes() }
            // The reader's own record: libvips' error buffer, which the thrown error reads, is one
            // for the process, and a failure in a concurrent suite may clear it first.
            let failure = VipsImage.readingAhead(file: name).lastFailure ?? ""
            #expect(failure.contains("\(name): strip 3 of"), "\(failure); \(error.message)")
        }

        /// Rows asked for out of order (the bottom first, then the top, then the middle) are still
        /// the file's rows: groups given back are decoded again on the caller's thread.
        /// Read row by row (strips larger than the read-ahead), a part of a strip asked for again
        /// is decoded from the strip's start.
        @Test(arguments: [(16, StripTIFF.defaultReadAhead), (400, StripTIFFTests.smallReadAhead)])
        func rowsAskedForAgainAreDecodedAgain(rowsPerStrip: Int, readAhead: Int) throws {
            let tiff = try Self.written(samples: 3, compression: COMPRESSION_LZW, rowsPerStrip: rowsPerStrip)
            let (path, height) = (tiff.path, tiff.height)
            let header = try VipsImage.open(file: path)
            let image = try #require(VipsImage.readingStripsAhead(file: path, header: header, readAhead: readAhead))
            let libvips = try VipsImage.open(file: path)
            for top in [height - 40, 0, height / 2, 3] {
                let ours = try image.extracted(left: 5, top: top, width: 300, height: 30).bytes()
                #expect(try ours == libvips.extracted(left: 5, top: top, width: 300, height: 30).bytes(), "rows from \(top)")
            }
            #expect(VipsImage.readingAhead(file: path).groupsDecodedAgain > 0)
        }

        /// Strip tables that point outside the file (an offset past its end, a byte count of 2 GB),
        /// from a file and from bytes: the reader takes them (the header is plain), reads nothing
        /// out of bounds and holds none of the claimed bytes, and ends as libvips' loader does on
        /// the same file: both fail (the reader naming the strip), or both give the same pixels
        /// (libtiff cuts a byte count to the end of the file).
        /// Both also read row by row (a read-ahead smaller than a strip).
        @Test(arguments: [(273, 0x7FFF_0000), (279, 0x7FFF_FFFF)], [StripTIFF.defaultReadAhead, StripTIFFTests.smallReadAhead])
        func hostileStripTablesEndAsLibvipsEnds(entry: (tag: Int, value: Int), readAhead: Int) throws {
            let (tag, value) = entry
            let tiff = try Self.written(samples: 3, compression: COMPRESSION_LZW, rowsPerStrip: 64)
            let path = tiff.path
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            // Strip 7's entry in the StripOffsets (273) or StripByteCounts (279) table.
            let entry = try #require(TIFFFile.tableEntry(tag: tag, index: 7, in: bytes))
            for index in 0..<4 { bytes[entry + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
            let data = Data(bytes)
            try data.write(to: URL(fileURLWithPath: path))

            Vips.setThreadsPerImage(1)
            let header = try VipsImage.open(file: path)
            let libvips = Result { try VipsImage.open(file: path, options: "access=sequential,fail_on=truncated").bytes() }
            let fromFile = try #require(VipsImage.readingStripsAhead(file: path, header: header, readAhead: readAhead))
            let fromData = try #require(
                VipsImage.readingStripsAhead(bytes: VipsBytes(data), name: "fetched \(tag)", header: header, readAhead: readAhead))
            for (ours, origin, name) in [
                (Result { try fromFile.bytes() }, "file", path), (Result { try fromData.bytes() }, "bytes", "fetched \(tag)"),
            ] {
                switch (ours, libvips) {
                case (.success(let ours), .success(let theirs)):
                    #expect(ours == theirs, "\(origin): other pixels than libvips'")
                case (.failure(let error), .failure):
                    #expect(VipsImage.readingAhead(file: name).lastFailure?.contains("strip 7 of") == true, "\(origin): \(error)")
                default:
                    Issue.record(
                        "\(origin): the reader \(ours.isSuccess ? "read" : "failed on") a file libvips' loader \(libvips.isSuccess ? "read" : "failed on")"
                    )
                }
            }
        }

        /// A strip whose LZW stream is garbage fails the read with libtiff's reason and the
        /// strip's number, as libvips' own loader fails on it; no pixels come out.
        /// Read whole or row by row.
        @Test(arguments: [StripTIFF.defaultReadAhead, StripTIFFTests.smallReadAhead])
        func aDamagedStripFailsTheRead(readAhead: Int) throws {
            let tiff = try Self.written(samples: 3, compression: COMPRESSION_LZW, rowsPerStrip: 64)
            let (path, strips) = (tiff.path, tiff.strips)
            // Garble the middle of strip 5: its codes then point outside the LZW table.
            let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try file.seek(toOffset: UInt64(strips[5].offset + strips[5].count / 2))
            try file.write(contentsOf: Data(repeating: 0xFF, count: 64))
            try file.close()

            let header = try VipsImage.open(file: path)
            let image = try #require(VipsImage.readingStripsAhead(file: path, header: header, readAhead: readAhead))
            let error = try #require(throws: VipsError.self) { try image.bytes() }
            #expect(VipsImage.readingAhead(file: path).lastFailure?.contains("strip 5 of") == true, "\(error.message)")
            #expect(throws: VipsError.self) { try VipsImage.open(file: path, options: "access=sequential,fail_on=truncated").bytes() }
        }

        /// Files the reader does not take come back nil: libvips reads them.
        @Test func declinesWhatItDoesNotRead() throws {
            let directory = try TemporaryDirectory()
            let (width, height) = Self.size(samples: 3)
            var declined: [String] = []
            // Too small to gain from threads.
            declined.append(directory.path + "/small.tif")
            try TIFFFile.write(declined.last!, width: 300, height: 200, samples: 3, compression: COMPRESSION_LZW, rowsPerStrip: 16)
            // Associated (premultiplied) alpha, which libvips would unpremultiply.
            declined.append(directory.path + "/premultiplied.tif")
            try TIFFFile.write(
                declined.last!, width: width, height: height, samples: 4, compression: COMPRESSION_LZW, rowsPerStrip: 16,
                extraSample: UInt16(EXTRASAMPLE_ASSOCALPHA))
            // Not compressed: nothing to gain.
            declined.append(directory.path + "/plain.tif")
            try TIFFFile.write(declined.last!, width: width, height: height, samples: 3, compression: COMPRESSION_NONE, rowsPerStrip: 16)
            // Tiled, JPEG-compressed and 16-bit files written by libvips.
            let source = try VipsImage.open(file: directory.path + "/plain.tif")
            for (name, suffix) in [("tiled", ".tif[tile,compression=lzw]"), ("jpeg", ".tif[compression=jpeg]")] {
                declined.append(directory.path + "/\(name).tif")
                try source.encoded(suffix: suffix).write(to: URL(fileURLWithPath: declined.last!))
            }
            declined.append(directory.path + "/sixteen.tif")
            try source.cast(to: .ushort).encoded(suffix: ".tif[compression=lzw]").write(to: URL(fileURLWithPath: declined.last!))

            for path in declined {
                let header = try VipsImage.open(file: path)
                #expect(VipsImage.readingStripsAhead(file: path, header: header) == nil, "\(path)")
            }
        }

        /// An image dropped before its last row was asked for lets its workers go: none is left
        /// waiting for a slot that nobody frees.
        @Test func workersLeaveWhenTheImageGoes() throws {
            let tiff = try Self.written(samples: 3, compression: COMPRESSION_LZW, rowsPerStrip: 8)
            let (path, width) = (tiff.path, tiff.width)
            do {
                let header = try VipsImage.open(file: path)
                let image = try #require(VipsImage.readingStripsAhead(file: path, header: header))
                _ = try image.extracted(left: 0, top: 0, width: width, height: 10).bytes()
                #expect(VipsImage.readingAhead(file: path).readers == 1)
            }
            // Bounded: 200 checks 10 ms apart.
            var running = VipsImage.readingAhead(file: path).workersRunning
            for _ in 0..<200 where running > 0 {
                Thread.sleep(forTimeInterval: 0.01)
                running = VipsImage.readingAhead(file: path).workersRunning
            }
            #expect(running == 0)
        }

        /// A TIFF of `size(samples:)` written with libtiff into a folder of its own, which lives as
        /// long as the value.
        struct Written {
            let directory: TemporaryDirectory
            let path: String
            let width: Int
            let height: Int
            let strips: [TIFFFile.Strip]
        }

        static func written(samples: Int, compression: Int32, rowsPerStrip: Int) throws -> Written {
            let directory = try TemporaryDirectory()
            let path = directory.path + "/image.tif"
            let (width, height) = size(samples: samples)
            let strips = try TIFFFile.write(
                path, width: width, height: height, samples: samples, compression: compression, rowsPerStrip: rowsPerStrip)
            return Written(directory: directory, path: path, width: width, height: height, strips: strips)
        }

        /// A size just over the reader's smallest image (8 MiB of pixels) for `samples` bands, with
        /// a height no strip height here divides.
        static func size(samples: Int) -> (width: Int, height: Int) {
            let width = 1531
            return (width, (8 << 20) / (width * samples) + 3)
        }
    }
}

/// Writes 8-bit TIFFs with libtiff, strip by strip, in layouts libvips' writer does not make.
enum TIFFFile {
    struct Strip {
        let offset: Int
        let count: Int
    }

    /// Writes rows of a smooth pattern with some noise (so compression has work to do) and
    /// returns where each strip's compressed bytes are in the file.
    @discardableResult
    static func write(
        _ path: String, width: Int, height: Int, samples: Int, compression: Int32, rowsPerStrip: Int,
        extraSample: UInt16 = UInt16(EXTRASAMPLE_UNASSALPHA)
    ) throws -> [Strip] {
        let tiff = try #require(TIFFOpen(path, "w"))
        let colours = samples >= 3 ? 3 : 1
        func set16(_ tag: Int32, _ value: Int) { _ = pl_tiff_set_u16(tiff, UInt32(tag), UInt16(value)) }
        func set32(_ tag: Int32, _ value: Int) { _ = pl_tiff_set_u32(tiff, UInt32(tag), UInt32(value)) }
        set32(TIFFTAG_IMAGEWIDTH, width)
        set32(TIFFTAG_IMAGELENGTH, height)
        set16(TIFFTAG_BITSPERSAMPLE, 8)
        set16(TIFFTAG_SAMPLESPERPIXEL, samples)
        set16(TIFFTAG_PHOTOMETRIC, Int(colours == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK))
        set16(TIFFTAG_PLANARCONFIG, Int(PLANARCONFIG_CONTIG))
        set16(TIFFTAG_COMPRESSION, Int(compression))
        set32(TIFFTAG_ROWSPERSTRIP, rowsPerStrip)
        if compression == COMPRESSION_LZW || compression == COMPRESSION_ADOBE_DEFLATE {
            set16(TIFFTAG_PREDICTOR, Int(PREDICTOR_HORIZONTAL))
        }
        if samples > colours {
            var kind = extraSample
            _ = pl_tiff_set_extra_samples(tiff, 1, &kind)
        }
        let rowBytes = width * samples
        // A pattern with some noise, two rows long, of which each row is a window starting 7
        // bytes after the last one's: made once, then copied row by row (an unoptimized,
        // sanitized build stores byte by byte slowly).
        var noise = SeededBytes(seed: UInt32(samples * 1000 + rowsPerStrip))
        let jitter = noise.next(2 * rowBytes)
        let pattern = (0..<2 * rowBytes).map { column in
            UInt8(truncatingIfNeeded: column / samples + column % samples * 40) &+ jitter[column] % 8
        }
        var strip = [UInt8](repeating: 0, count: rowBytes * rowsPerStrip)
        var index: UInt32 = 0
        for top in stride(from: 0, to: height, by: rowsPerStrip) {
            let rows = min(rowsPerStrip, height - top)
            strip.withUnsafeMutableBufferPointer { strip in
                pattern.withUnsafeBufferPointer { pattern in
                    for row in 0..<rows {
                        let start = (top + row) * 7 % rowBytes
                        strip.baseAddress!.advanced(by: row * rowBytes).update(
                            from: pattern.baseAddress!.advanced(by: start), count: rowBytes)
                    }
                }
            }
            guard TIFFWriteEncodedStrip(tiff, index, &strip, tmsize_t(rows * rowBytes)) >= 0 else {
                TIFFClose(tiff)
                throw TIFFWriteFailed(path: path)
            }
            index += 1
        }
        TIFFClose(tiff)

        // Read back where the strips went (libtiff chose).
        let reader = try #require(TIFFOpen(path, "r"))
        defer { TIFFClose(reader) }
        return (0..<TIFFNumberOfStrips(reader)).map { strip in
            Strip(offset: Int(TIFFGetStrileOffset(reader, strip)), count: Int(TIFFGetStrileByteCount(reader, strip)))
        }
    }

    /// Where entry `index` of a 32-bit strip table (`tag`) is in a little-endian TIFF as libtiff
    /// writes it (the first directory, the table stored after it), or nil.
    static func tableEntry(tag: Int, index: Int, in bytes: [UInt8]) -> Int? {
        func read(_ at: Int, _ count: Int) -> Int {
            (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
        }
        guard bytes.count > 8, bytes[0] == 0x49, bytes[1] == 0x49 else { return nil }
        let directory = read(4, 4)
        guard directory + 2 <= bytes.count else { return nil }
        for entry in 0..<read(directory, 2) {
            let at = directory + 2 + entry * 12
            guard at + 12 <= bytes.count, read(at, 2) == tag else { continue }
            // LONG entries; more than one, so the value is the table's offset.
            guard read(at + 2, 2) == 4, index < read(at + 4, 4), read(at + 4, 4) > 1 else { return nil }
            let table = read(at + 8, 4) + index * 4
            return table + 4 <= bytes.count ? table : nil
        }
        return nil
    }

    struct TIFFWriteFailed: Error {
        let path: String
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
