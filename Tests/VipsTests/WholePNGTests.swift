import CDeflate
import Foundation
import TestSupport
import Testing
import Vips

extension OneAtATime {
    /// The whole-PNG reader is checked against libvips' own PNG loader, which reads every file here
    /// too: the pixels must be the same, and every file it declines or finds a fault in must come
    /// back nil, so that libvips reads it instead.
    @Suite("PNGs read whole with libdeflate")
    struct WholePNGTests {
        /// Every row filter, on every row (the first included, whose row above is all zeros), for
        /// each kind of pixel the reader takes: its pixels are libvips' pixels.
        @Test(arguments: [1, 2, 3, 4])
        func everyFilterUndoesToLibvipsPixels(channels: Int) throws {
            let directory = try TemporaryDirectory()
            let width = 37, height = 23
            var random = SeededBytes(seed: UInt32(channels))
            // Rows of noise, each row's filter in turn 0...4, so every filter meets every other above it.
            let rows = (0..<height).map { y in [UInt8(y % 5)] + random.next(width * channels) }
            let path = try directory.write(PNGFile(width: width, height: height, channels: channels, rows: rows).bytes, to: "filters.png")

            let (whole, streamed) = try decodeBothWays(path)

            let decoded = try #require(whole, "the reader declined a plain 8-bit PNG")
            #expect(decoded.width == width && decoded.height == height && decoded.bands == channels)
            #expect(try decoded.bytes() == streamed.bytes())
        }

        @Test func filesLibvipsWritesReadTheSameWholeAsStreamed() throws {
            let directory = try TemporaryDirectory()
            for filter in ["none", "sub", "up", "avg", "paeth", "all"] {
                for bands in [1, 3, 4] {
                    let image = try Fixtures.gradient(width: 301, height: 97, bands: bands)
                    let path = try directory.write(try image.encoded(suffix: ".png[filter=\(filter)]"), to: "\(filter)-\(bands).png")
                    let (whole, streamed) = try decodeBothWays(path)
                    let decoded = try #require(whole, "declined \(filter), \(bands) bands")
                    #expect(try decoded.bytes() == streamed.bytes(), "\(filter), \(bands) bands")
                    #expect(decoded.interpretation == streamed.interpretation)
                }
            }
        }

        @Test func fetchedBytesReadAsTheFileDoes() throws {
            let data = try Fixtures.gradient(width: 64, height: 40).encoded(suffix: ".png[filter=all]")
            let header = try VipsImage.open(data: data)
            let decoded = try #require(VipsImage.decodeWholePNG(bytes: VipsBytes(data), header: header))
            #expect(try decoded.bytes() == VipsImage.open(data: data).bytes())
        }

        /// The loader's metadata travels with the pixels: the profile that converts them to sRGB and
        /// the EXIF orientation that turns them upright.
        @Test func theProfileAndOrientationComeFromTheHeader() throws {
            let directory = try TemporaryDirectory()
            let profiled = try directory.write(
                try Fixtures.gradient(width: 40, height: 20).encoded(suffix: ".png[profile=srgb]"), to: "profiled.png")
            let (withProfile, streamedWithProfile) = try decodeBothWays(profiled)
            #expect(streamedWithProfile.hasICCProfile, "the fixture lacks what the test checks")
            #expect(try #require(withProfile).hasICCProfile)
            #expect(withProfile?.loader == streamedWithProfile.loader)

            // An eXIf chunk saying "rotate 90° clockwise": big-endian TIFF header, one IFD entry.
            var exif: [UInt8] = Array("MM".utf8) + [0, 42]
            exif += PNGFile.word(8)
            exif += [0, 1, 0x01, 0x12, 0, 3]
            exif += PNGFile.word(1)
            exif += [0, 6, 0, 0]
            exif += PNGFile.word(0)
            let rows = (0..<4).map { (y: Int) -> [UInt8] in [0] + (0..<24).map { (x: Int) -> UInt8 in UInt8(x * 10 + y) } }
            var file = PNGFile(width: 8, height: 4, channels: 3, rows: rows)
            file.chunksBeforeData = [("eXIf", exif)]
            let oriented = try directory.write(file.bytes, to: "oriented.png")
            let (whole, streamed) = try decodeBothWays(oriented)
            let decoded = try #require(whole)
            #expect(streamed.orientation == 6, "the fixture lacks what the test checks")
            #expect(decoded.orientation == 6)
            #expect(try decoded.autorotated().bytes() == streamed.autorotated().bytes())
        }

        /// Kinds it leaves to libvips: interlaced, 16 bits, a palette, a transparency chunk.
        @Test func declinesWhatItDoesNotRead() throws {
            let directory = try TemporaryDirectory()
            let image = try Fixtures.gradient(width: 30, height: 20)
            let interlaced = try directory.write(try image.encoded(suffix: ".png[interlace]"), to: "interlaced.png")
            let palette = try directory.write(try image.encoded(suffix: ".png[palette]"), to: "palette.png")
            let deep = try directory.write(try image.cast(to: .ushort).labelled(as: .rgb16).encoded(suffix: ".png"), to: "deep.png")
            let rows = (0..<20).map { _ in [UInt8(0)] + [UInt8](repeating: 9, count: 30 * 3) }
            var transparent = PNGFile(width: 30, height: 20, channels: 3, rows: rows)
            transparent.chunksBeforeData = [("tRNS", [0, 9, 0, 9, 0, 9])]
            let keyed = try directory.write(transparent.bytes, to: "keyed.png")

            for path in [interlaced, palette, deep, keyed] {
                let header = try VipsImage.open(file: path)
                #expect(VipsImage.decodeWholePNG(file: path, header: header) == nil, "\(path)")
                // libvips itself still reads every one of them.
                #expect(try VipsImage.open(file: path).rendered().width == 30)
            }
        }

        /// Faults the reader finds send the file back to libvips, which reads or rejects it as it
        /// always has; nothing here may crash or return pixels other than libvips' own.
        @Test func faultsAreLeftToLibvips() throws {
            let directory = try TemporaryDirectory()
            let width = 16, height = 8
            let good = (0..<height).map { (y: Int) -> [UInt8] in [UInt8(y % 5)] + [UInt8](repeating: UInt8(y * 3), count: width * 3) }
            var cases: [(String, PNGFile)] = []

            var badFilter = PNGFile(width: width, height: height, channels: 3, rows: good)
            badFilter.rows[3][0] = 5
            cases.append(("a filter PNG does not have", badFilter))

            var short = PNGFile(width: width, height: height, channels: 3, rows: good)
            short.rows.removeLast()
            cases.append(("a row missing", short))

            var long = PNGFile(width: width, height: height, channels: 3, rows: good)
            long.rows.append(good[0])
            cases.append(("a row too many", long))

            var badCRC = PNGFile(width: width, height: height, channels: 3, rows: good)
            badCRC.corruptsDataCRC = true
            cases.append(("a CRC that does not match", badCRC))

            var split = PNGFile(width: width, height: height, channels: 3, rows: good)
            split.splitsDataAround = ("tEXt", Array("Comment\u{0}between".utf8))
            cases.append(("image data split by another chunk", split))

            var unknownCritical = PNGFile(width: width, height: height, channels: 3, rows: good)
            unknownCritical.chunksBeforeData = [("ZZZZ", [1, 2, 3])]
            cases.append(("an unknown critical chunk", unknownCritical))

            var noEnd = PNGFile(width: width, height: height, channels: 3, rows: good)
            noEnd.endsWithoutIEND = true
            cases.append(("no end chunk", noEnd))

            for (name, file) in cases {
                let path = try directory.write(file.bytes, to: "\(name).png")
                guard let header = try? VipsImage.open(file: path) else { continue }  // libvips refused even the header
                #expect(VipsImage.decodeWholePNG(file: path, header: header) == nil, "\(name)")
            }

            // An unknown ancillary chunk is skipped, as libpng skips it.
            var ancillary = PNGFile(width: width, height: height, channels: 3, rows: good)
            ancillary.chunksBeforeData = [("zzZz", [1, 2, 3])]
            let path = try directory.write(ancillary.bytes, to: "ancillary.png")
            let (whole, streamed) = try decodeBothWays(path)
            #expect(try #require(whole).bytes() == streamed.bytes())
        }

        /// Every byte of a small file changed in turn, CRCs left as they are: no crash, and whatever
        /// the reader returns is what libvips decodes from the same bytes.
        @Test func everySingleByteChangeIsDeclinedOrRightUnderAFixedCRC() throws {
            let directory = try TemporaryDirectory()
            let rows: [[UInt8]] = (0..<6).map { (y: Int) -> [UInt8] in
                let pixels: [UInt8] = (0..<20).map { (x: Int) -> UInt8 in UInt8(truncatingIfNeeded: x * 7 + y) }
                return [UInt8(y % 5)] + pixels
            }
            let original = PNGFile(width: 5, height: 6, channels: 4, rows: rows).bytes
            var accepted = 0
            for index in 8..<original.count {
                var bytes = original
                bytes[index] ^= 0x5A
                let path = try directory.write(Data(bytes), to: "mutated.png")
                guard let header = try? VipsImage.open(file: path), let decoded = VipsImage.decodeWholePNG(file: path, header: header)
                else { continue }
                accepted += 1
                #expect(try decoded.bytes() == VipsImage.open(file: path).bytes(), "byte \(index)")
            }
            // Only changes in bytes no CRC covers may be accepted: none that reach the pixels.
            #expect(accepted == 0)
        }

        private func decodeBothWays(_ path: String) throws -> (whole: VipsImage?, streamed: VipsImage) {
            let header = try VipsImage.open(file: path)
            return (VipsImage.decodeWholePNG(file: path, header: header), try VipsImage.open(file: path, options: "access=sequential"))
        }
    }
}

/// A PNG written byte by byte, so that a test can give it any rows, filters and chunks.
struct PNGFile {
    let width: Int
    let height: Int
    let channels: Int
    /// Each row: its filter byte, then `width × channels` bytes.
    var rows: [[UInt8]]
    var chunksBeforeData: [(String, [UInt8])] = []
    var corruptsDataCRC = false
    /// A chunk put between two halves of the image data.
    var splitsDataAround: (String, [UInt8])?
    var endsWithoutIEND = false

    var bytes: Data {
        var out: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
        let colourType: UInt8 = [1: 0, 2: 4, 3: 2, 4: 6][channels]!
        out += Self.chunk("IHDR", Self.word(width) + Self.word(height) + [8, colourType, 0, 0, 0])
        for (type, payload) in chunksBeforeData { out += Self.chunk(type, payload) }
        let stream = Self.zlib(rows.flatMap { $0 })
        if let (type, payload) = splitsDataAround {
            let half = stream.count / 2
            out += Self.chunk("IDAT", Array(stream[..<half])) + Self.chunk(type, payload) + Self.chunk("IDAT", Array(stream[half...]))
        } else {
            var data = Self.chunk("IDAT", stream)
            if corruptsDataCRC { data[data.count - 1] ^= 1 }
            out += data
        }
        if !endsWithoutIEND { out += Self.chunk("IEND", []) }
        return Data(out)
    }

    static func word(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + payload
        let crc = typed.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        return word(payload.count) + typed + word(Int(crc))
    }

    static func zlib(_ raw: [UInt8]) -> [UInt8] {
        let compressor = libdeflate_alloc_compressor(6)!
        defer { libdeflate_free_compressor(compressor) }
        var out = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, raw.count))
        let size = raw.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { libdeflate_zlib_compress(compressor, input.baseAddress, input.count, $0.baseAddress, $0.count) }
        }
        return Array(out[..<size])
    }
}

/// Deterministic bytes for fixtures.
struct SeededBytes {
    var state: UInt32
    init(seed: UInt32) { state = seed &* 2_654_435_761 &+ 1 }
    mutating func next(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}
