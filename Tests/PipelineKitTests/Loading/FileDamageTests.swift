import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The reason a file libvips could not read is given from its structure: the lengths its
/// format declares against the bytes it has.
@Suite struct FileDamageTests {
    /// Each format whose structure declares its lengths, cut in half, and the reason it gets.
    static let cutInHalf: [(ext: String, reason: String)] = [
        ("png", "the PNG is cut short: its IDAT chunk declares"),
        ("webp", "the WebP is cut short: its RIFF header declares"),
        ("avif", "the AVIF is cut short: its mdat box declares"),
        ("heic", "the HEIF is cut short: its mdat box declares"),
        ("jp2", "the JPEG 2000 file is cut short: its jp2c box declares"),
        ("tif", "the TIFF is cut short: its first directory is at byte"),
    ]

    @Test(arguments: cutInHalf)
    func aFileCutInHalfIsCutShort(ext: String, reason: String) throws {
        let directory = try TemporaryDirectory()
        let whole = try HostileFixtures.photo(ext, width: 96, height: 64)
        for source in try PNGStructureTests.sources(whole, in: directory) {
            #expect(FileDamage.reason(in: source) == nil, "the whole \(ext)")
        }
        for source in try PNGStructureTests.sources(HostileFixtures.truncated(whole), in: directory) {
            let found = FileDamage.reason(in: source)
            #expect(found?.hasPrefix(reason) == true, "\(ext): \(found ?? "nil")")
        }
    }

    /// The declared and remaining byte counts are the file's own.
    @Test func theCountsAreTheFilesOwn() throws {
        let directory = try TemporaryDirectory()
        let whole = try HostileFixtures.photo("webp", width: 96, height: 64)
        let cut = whole.prefix(100)
        for source in try PNGStructureTests.sources(cut, in: directory) {
            #expect(
                FileDamage.reason(in: source) == "the WebP is cut short: its RIFF header declares \(whole.count - 8) bytes and 92 follow")
        }
        // A TIFF whose first directory is whole but past the end of a file cut before it.
        let tiff = try HostileFixtures.photo("tif", width: 96, height: 64)
        let directoryOffset = [UInt8](tiff)[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        for source in try PNGStructureTests.sources(tiff.prefix(directoryOffset + 1), in: directory) {
            #expect(
                FileDamage.reason(in: source)
                    == "the TIFF is cut short: its first directory is at byte \(directoryOffset) and its bytes end at \(directoryOffset + 1)"
            )
        }
    }

    /// A little-endian greyscale TIFF of `width` × `height` in two strips, its directory first, at
    /// byte 8, as exiftool and many cameras and scanners write one: a file cut inside its pixels
    /// keeps a whole directory.
    static func tiffWithItsDirectoryFirst(width: Int, height: Int) -> Data {
        func short(_ value: Int) -> [UInt8] { [UInt8(value & 0xff), UInt8(value >> 8)] }
        func long(_ value: Int) -> [UInt8] { short(value & 0xffff) + short(value >> 16) }
        let rows = (height + 1) / 2
        let stripBytes = [rows * width, (height - rows) * width]
        // Nine entries; the strip offsets and counts (two LONGs each) fit in their entries.
        let dataStart = 8 + 2 + 9 * 12 + 4
        let entries: [(tag: Int, type: Int, count: Int, value: [UInt8])] = [
            (256, 4, 1, long(width)), (257, 4, 1, long(height)), (258, 3, 1, short(8) + short(0)), (259, 3, 1, short(1) + short(0)),
            (262, 3, 1, short(1) + short(0)), (273, 4, 2, []), (277, 3, 1, short(1) + short(0)), (278, 4, 1, long(rows)),
            (279, 4, 2, []),
        ]
        // Two values of four bytes do not fit in an entry: they follow the pixels.
        let pixelsEnd = dataStart + width * height
        var bytes: [UInt8] = Array("II".utf8) + short(42) + long(8) + short(entries.count)
        for entry in entries {
            let value = entry.tag == 273 ? long(pixelsEnd) : entry.tag == 279 ? long(pixelsEnd + 8) : entry.value
            bytes += short(entry.tag) + short(entry.type) + long(entry.count) + value
        }
        bytes += long(0)
        bytes += (0..<(width * height)).map { UInt8($0 % 251) }
        bytes += long(dataStart) + long(dataStart + stripBytes[0]) + long(stripBytes[0]) + long(stripBytes[1])
        return Data(bytes)
    }

    @Test func aTIFFCutInsideItsStripsSaysWhereTheyRun() throws {
        // Given a TIFF whose directory comes first, which libvips reads whole
        let directory = try TemporaryDirectory()
        let whole = Self.tiffWithItsDirectoryFirst(width: 16, height: 10)
        #expect(try VipsImage.open(data: whole).size == ImageSize(width: 16, height: 10))
        for source in try PNGStructureTests.sources(whole, in: directory) { #expect(FileDamage.reason(in: source) == nil) }
        // When it is cut at byte 246, inside its second strip (bytes 202 to 282), the strips'
        // offsets and counts (the last 16 bytes) moved before the cut and their entries (the
        // sixth and ninth) pointed at them
        let bytes = [UInt8](whole)
        var cut = Array(bytes.prefix(246)) + Array(bytes.suffix(16))
        for (entry, value) in [(5, 246), (8, 254)] {
            let at = 8 + 2 + entry * 12 + 8
            for index in 0..<4 { cut[at + index] = UInt8((value >> (8 * index)) & 0xff) }
        }
        // Then the reason says where the strips run and where the bytes end
        for source in try PNGStructureTests.sources(Data(cut), in: directory) {
            #expect(
                FileDamage.reason(in: source) == "the TIFF is cut short: its first image's strips run to byte 282 and its bytes end at 262")
        }
        #expect(throws: (any Error).self) { try VipsImage.open(data: Data(cut)).rendered() }
    }

    /// Formats walked here with nothing wrong in their structure, and formats not walked,
    /// have no reason to give: libvips' loader's own stands.
    @Test func wholeFilesAndFormatsNotWalkedHaveNone() throws {
        let directory = try TemporaryDirectory()
        var files: [Data] = []
        for ext in ["png", "webp", "avif", "heic", "jp2", "tif", "jpg", "gif", "jxl"] {
            let whole = try HostileFixtures.photo(ext, width: 96, height: 64)
            files.append(whole)
            // Bytes after the end of a whole file are not damage.
            files.append(whole + Data(repeating: 0, count: 64))
        }
        // JPEG and GIF loaders say themselves when the data ends early; not walked.
        files.append(HostileFixtures.truncated(try HostileFixtures.photo("jpg")))
        files.append(Data("<html></html>".utf8))
        files.append(Data())
        for data in files {
            for source in try PNGStructureTests.sources(data, in: directory) {
                #expect(FileDamage.reason(in: source) == nil, "\(data.prefix(12).map { String($0) })")
            }
        }
    }

    /// Sizes and types from hostile bytes: a 64-bit box size next to 2^63 is compared without
    /// overflow, and a type of control characters is not printed.
    @Test func hostileBoxHeadersAreNamedSafely() throws {
        let directory = try TemporaryDirectory()
        let fileType: [UInt8] = [0, 0, 0, 16] + Array("ftypavif".utf8) + [0, 0, 0, 0]
        let huge = fileType + [0, 0, 0, 1] + Array("mdat".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3]
        let escape = fileType + [0, 0, 1, 0, 0x1B, 0x5B, 0x32, 0x4A, 1, 2, 3]
        let cases: [([UInt8], String)] = [
            (huge, "the AVIF is cut short: its mdat box declares 9223372036854775791 bytes and 3 follow"),
            (escape, "the AVIF is cut short: a box declares 248 bytes and 3 follow"),
            (fileType + [0, 0, 0, 4] + Array("free".utf8), "the AVIF is damaged: its free box at byte 16 declares 4 bytes"),
            (
                fileType + [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0], "the AVIF is cut short: its bytes end inside a box header at byte 16"
            ),
        ]
        for (bytes, reason) in cases {
            for source in try PNGStructureTests.sources(Data(bytes), in: directory) {
                #expect(FileDamage.reason(in: source) == reason)
            }
        }
    }
}
