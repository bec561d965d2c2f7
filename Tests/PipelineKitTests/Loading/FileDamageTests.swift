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
