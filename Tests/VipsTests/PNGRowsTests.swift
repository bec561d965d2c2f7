import CDeflate
import Foundation
import TestSupport
import Testing
import Vips

extension OneAtATime {
    /// The PNG rows reader is checked against libvips' own PNG loader reading the same files: the
    /// pixels must be the same, damage must end as it ends there, and rows asked for out of order
    /// must still be the file's.
    @Suite("Large PNGs read with rows decoded ahead")
    struct PNGRowsTests {
        /// Grey, grey and alpha, RGB, RGB and alpha, rows filtered as libvips' encoder picks them with every filter allowed.
        @Test(arguments: [1, 2, 3, 4])
        func readsLibvipsPixels(bands: Int) throws {
            let directory = try TemporaryDirectory()
            let path = try directory.write(try Self.image(bands: bands).encoded(suffix: ".png[filter=all,compression=1]"), to: "large.png")
            let header = try VipsImage.open(file: path)
            Vips.setThreadsPerImage(1)
            // A small read-ahead: many groups of a few rows, each boundary a filter's row above.
            let image = try #require(
                VipsImage.readingPNGRowsAhead(file: path, header: header, readAhead: Self.smallReadAhead), "declined \(bands) bands")
            #expect(image.width == header.width && image.height == header.height && image.bands == bands)
            #expect(try image.bytes() == VipsImage.open(file: path, options: "access=sequential").bytes())
            #expect(VipsImage.readingAhead(file: path).readers == 1)
            #expect(VipsImage.readingAhead(file: path).groupsDecodedAgain == 0, "read top to bottom, nothing is decoded twice")
            let held = try #require(VipsImage.pngRowsAheadBytes(file: path, header: header, readAhead: Self.smallReadAhead))
            #expect(held <= Self.smallReadAhead && held >= 3 * header.width * bands, "\(held) bytes held")
        }

        /// Bytes in memory read as the file is; rows asked for out of order are decoded again from
        /// the top of the file.
        @Test func fetchedBytesAndRowsAskedForAgain() throws {
            let data = try Self.image(bands: 3).encoded(suffix: ".png[filter=paeth,compression=1]")
            let header = try VipsImage.open(data: data)
            let libvips = try VipsImage.open(data: data)
            let name = "fetched \(UUID().uuidString)"
            let image = try #require(VipsImage.readingPNGRowsAhead(bytes: VipsBytes(data), name: name, header: header))
            for top in [header.height - 40, 0, header.height / 2, 3] {
                let ours = try image.extracted(left: 5, top: top, width: 300, height: 30).bytes()
                #expect(try ours == libvips.extracted(left: 5, top: top, width: 300, height: 30).bytes(), "rows from \(top)")
            }
            #expect(VipsImage.readingAhead(file: name).groupsDecodedAgain > 0)
        }

        /// Damaged bytes (inside the compressed rows, or a chunk's CRC) and a truncated file end as
        /// libvips' loader ends: both fail (the reader naming the row), or both give the same pixels.
        @Test func damageEndsAsLibvipsEnds() throws {
            let data = try Self.image(bands: 3).encoded(suffix: ".png[filter=all,compression=1]")
            let header = try VipsImage.open(data: data)
            var cases = [(HostileFixtures.truncated(data, to: 0.7), "truncated")]
            for fraction in [0.2, 0.5, 0.8, 0.999] {
                cases.append((HostileFixtures.corrupted(data, at: fraction, count: 8), "damaged at \(fraction)"))
            }
            Vips.setThreadsPerImage(1)
            var failedInBoth = 0
            for (bytes, label) in cases {
                guard let damagedHeader = try? VipsImage.open(data: bytes), damagedHeader.width == header.width else { continue }
                let ours = try #require(
                    VipsImage.readingPNGRowsAhead(bytes: VipsBytes(bytes), name: label, header: damagedHeader), "\(label)")
                let theirs = Result { try VipsImage.open(data: bytes, options: "access=sequential,fail_on=truncated").bytes() }
                switch (Result { try ours.bytes() }, theirs) {
                case (.success(let ours), .success(let pixels)): #expect(ours == pixels, "\(label): other pixels than libvips'")
                case (.failure(let error), .failure):
                    failedInBoth += 1
                    #expect(Self.failureNamesARow(label), "\(label): \(error)")
                case (let ours, _):
                    Issue.record(
                        "\(label): the reader \(ours.isSuccess ? "read" : "failed on") what libvips' loader \(theirs.isSuccess ? "read" : "failed on")"
                    )
                }
            }
            #expect(failedInBoth >= 2, "the truncated file and damaged rows fail")
        }

        /// The chunks around the image data laid out as encoders may, or as they must not: the
        /// reader reads what libvips' loader reads, the same pixels, and fails where it fails.
        @Test func chunkLayoutsEndAsLibvipsEnds() throws {
            let chunks = Self.chunks(of: try Self.image(bands: 3).encoded(suffix: ".png[filter=all,compression=1]"))
            let header = Array(chunks.prefix { $0.type != "IDAT" })
            let imageData = chunks.filter { $0.type == "IDAT" }.flatMap(\.payload)
            let end: [Chunk] = [(type: "IEND", payload: [])]
            func split(_ size: Int) -> [Chunk] {
                stride(from: 0, to: imageData.count, by: size).map {
                    (type: "IDAT", payload: Array(imageData[$0..<min($0 + size, imageData.count)]))
                }
            }
            let text: Chunk = (type: "tEXt", payload: Array("Comment\u{0}chunk layouts".utf8))
            let layouts: [(String, [Chunk])] = [
                ("one image data chunk", header + split(imageData.count) + end),
                ("small chunks and empty ones", header + split(999).flatMap { [$0, (type: "IDAT", payload: [])] } + end),
                ("a text chunk before the image data", header + [text] + split(8192) + end),
                ("an unknown critical chunk before the image data", header + [(type: "ABCD", payload: [1, 2, 3])] + split(8192) + end),
                ("a text chunk inside the image data", header + split(imageData.count / 2 + 1).flatMap { [$0, text] } + end),
                ("no end chunk", header + split(8192)),
            ]
            Vips.setThreadsPerImage(1)
            var outcomes: [String: Bool] = [:]
            var headerFailures: [String] = []
            for (label, layout) in layouts {
                let data = Self.png(layout)
                // A fault libpng meets in the header (before the image data) fails before any reader.
                guard let fileHeader = try? VipsImage.open(data: data) else {
                    headerFailures.append(label)
                    continue
                }
                let ours = try #require(
                    VipsImage.readingPNGRowsAhead(bytes: VipsBytes(data), name: label, header: fileHeader, readAhead: Self.smallReadAhead),
                    "\(label)")
                let theirs = Result { try VipsImage.open(data: data, options: "access=sequential,fail_on=truncated").bytes() }
                switch (Result { try ours.bytes() }, theirs) {
                case (.success(let ours), .success(let pixels)): #expect(ours == pixels, "\(label): other pixels than libvips'")
                case (.failure(let error), .failure): #expect(Self.failureNamesARow(label), "\(label): \(error)")
                case (let ours, _):
                    Issue.record(
                        "\(label): the reader \(ours.isSuccess ? "read" : "failed on") what libvips' loader \(theirs.isSuccess ? "read" : "failed on")"
                    )
                }
                outcomes[label] = theirs.isSuccess
            }
            #expect(headerFailures == ["an unknown critical chunk before the image data"], "failed in libvips' header: \(headerFailures)")
            #expect(
                outcomes["small chunks and empty ones"] == true && outcomes.values.contains(false),
                "both kinds of outcome are met: \(outcomes)")
        }

        /// Files the reader does not take come back nil: libvips reads them.
        @Test func declinesWhatItDoesNotRead() throws {
            let directory = try TemporaryDirectory()
            let image = try Self.image(bands: 3)
            var declined: [String] = []
            for (name, data) in [
                ("small", try Fixtures.gradient(width: 300, height: 200).encoded(suffix: ".png")),
                ("interlaced", try image.encoded(suffix: ".png[interlace,compression=1]")),
                ("sixteen", try image.cast(to: .ushort).encoded(suffix: ".png[bitdepth=16,compression=1]")),
                ("palette", try image.encoded(suffix: ".png[palette,compression=1]")),
            ] {
                declined.append(try directory.write(data, to: "\(name).png"))
            }
            for path in declined {
                #expect(VipsImage.readingPNGRowsAhead(file: path, header: try VipsImage.open(file: path)) == nil, "\(path)")
            }
        }

        typealias Chunk = (type: String, payload: [UInt8])

        /// A PNG's chunks, in order, without their CRCs.
        static func chunks(of data: Data) -> [Chunk] {
            let bytes = [UInt8](data)
            var chunks: [Chunk] = []
            var position = 8
            while position + 12 <= bytes.count {
                let length = bytes[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
                chunks.append(
                    (
                        String(decoding: bytes[position + 4..<position + 8], as: UTF8.self),
                        Array(bytes[position + 8..<position + 8 + length])
                    ))
                position += 12 + length
            }
            return chunks
        }

        /// A PNG made of `chunks`, each with its CRC.
        static func png(_ chunks: [Chunk]) -> Data {
            var bytes: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
            for chunk in chunks {
                let typed = Array(chunk.type.utf8) + chunk.payload
                let crc = typed.withUnsafeBytes { UInt32(libdeflate_crc32(0, $0.baseAddress, $0.count)) }
                for word in [UInt32(chunk.payload.count), crc] { bytes += withUnsafeBytes(of: word.bigEndian, Array.init) }
                bytes.insert(contentsOf: typed, at: bytes.count - 4)
            }
            return Data(bytes)
        }

        /// Whether the reader named `name` said which row failed. Read from the reader's own record:
        /// the thrown error carries the same text through libvips' error buffer, which a failure
        /// in a concurrent suite may read and clear first.
        static func failureNamesARow(_ name: String) -> Bool {
            VipsImage.readingAhead(file: name).lastFailure?.contains("pngload: \(name): row ") == true
        }

        static let smallReadAhead = 256 << 10

        /// Just over the reader's smallest image (8 MiB of pixels), with detail that compresses.
        static func image(bands: Int) throws -> VipsImage {
            let width = 1531, height = (8 << 20) / (1531 * bands) + 3
            let pixels = Fixtures.filled(count: width * height * bands) { buffer in
                var at = 0
                for y in 0..<height {
                    for x in 0..<width {
                        let values = (
                            UInt8(truncatingIfNeeded: x ^ y), UInt8(truncatingIfNeeded: x &+ 3 &* y),
                            UInt8(truncatingIfNeeded: x &* y >> 4),
                            UInt8(255 - (x + y) % 200)
                        )
                        buffer[at] = values.0
                        if bands > 1 { buffer[at + 1] = values.1 }
                        if bands > 2 { buffer[at + 2] = values.2 }
                        if bands > 3 { buffer[at + 3] = values.3 }
                        at += bands
                    }
                }
            }
            return try Fixtures.labelled(VipsImage(pixels: pixels, width: width, height: height, bands: bands))
        }
    }
}
