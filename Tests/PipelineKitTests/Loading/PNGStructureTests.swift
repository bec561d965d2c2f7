import CDeflate
import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The walk over a PNG's chunk lengths that refuses, before libpng sees it, a chunk before the
/// pixels declaring more bytes than the file has; and the walk to its end that says what is
/// wrong with a PNG libvips could not decode.
@Suite struct PNGStructureTests {
    /// The same bytes as a file and in memory.
    static func sources(_ data: Data, in directory: TemporaryDirectory) throws -> [EncodedSource] {
        let path = try directory.write(data, to: "image-\(UUID().uuidString).png")
        return [.file(path: path, byteCount: Int64(data.count)), .memory(VipsBytes(data))]
    }

    @Test func aChunkPastTheEndBeforeThePixelsIsFound() throws {
        let directory = try TemporaryDirectory()
        let data = try HostileFixtures.pngWithChunkPastTheEnd(type: "zTXt", length: 0x3FFF_FFFF)
        for source in try Self.sources(data, in: directory) {
            #expect(
                PNGStructure.oversizedChunk(in: source)
                    == PNGStructure.OversizedChunk(type: "zTXt", declared: 0x3FFF_FFFF, available: 16))
        }
    }

    @Test func wholePNGsAndFilesCutInTheirPixelsAreLeftToLibvips() throws {
        let directory = try TemporaryDirectory()
        let whole = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        // Cut inside the image data: libvips decides (failOn none makes the rows there are).
        let cut = HostileFixtures.truncated(whole, to: 0.7)
        let notPNG = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        // A length libpng itself refuses (past 2^31 - 1), and a type that is not four letters.
        var outOfRange = [UInt8](whole)
        outOfRange.replaceSubrange(33..<41, with: [0x80, 0, 0, 0] + Array("tEXt".utf8))
        var badType = [UInt8](whole)
        badType.replaceSubrange(33..<41, with: [0x3F, 0xFF, 0xFF, 0xFF, 0x1B, 0x5B, 0x32, 0x4A])
        for data in [whole, cut, notPNG, Data(), Data(outOfRange), Data(badType)] {
            for source in try Self.sources(data, in: directory) {
                #expect(PNGStructure.oversizedChunk(in: source) == nil, "\(data.count) bytes")
            }
        }
    }

    /// A file cut inside its header chunk is cut short too; libvips could not read it either.
    @Test func aFileCutInItsHeaderChunkIsFound() throws {
        let directory = try TemporaryDirectory()
        let whole = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        for source in try Self.sources(whole.prefix(20), in: directory) {
            #expect(PNGStructure.oversizedChunk(in: source) == PNGStructure.OversizedChunk(type: "IHDR", declared: 13, available: 4))
        }
    }

    /// The walk reads the file the decoder opens, not the size the input was listed with.
    @Test func theFilesOwnSizeCountsNotTheListedOne() throws {
        let directory = try TemporaryDirectory()
        let data = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        let path = try directory.write(data, to: "listed.png")
        #expect(PNGStructure.oversizedChunk(in: .file(path: path, byteCount: 0)) == nil)
    }

    /// The offset of the first chunk of `type` in a PNG.
    static func offset(of type: String, in data: Data) -> Int {
        let bytes = [UInt8](data)
        let letters = Array(type.utf8)
        return (8..<bytes.count - 4).first { bytes[$0 + 4..<$0 + 8].elementsEqual(letters) }!
    }

    /// The damage each way of breaking a whole PNG leaves, from its file and from memory.
    @Test func theDamageOfABrokenPNGIsNamedFromItsChunks() throws {
        let directory = try TemporaryDirectory()
        let whole = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        let imageData = Self.offset(of: "IDAT", in: whole)
        let end = Self.offset(of: "IEND", in: whole)
        let declared = [UInt8](whole)[imageData..<imageData + 4].reduce(0) { $0 << 8 | Int($1) }

        var flipped = [UInt8](whole)
        flipped[imageData + 8 + declared / 2] ^= 0xFF
        var badEnd = [UInt8](whole)
        badEnd[whole.count - 1] ^= 0xFF
        let cases: [(Data, String)] = [
            (
                whole.prefix(imageData + 8 + declared / 2),
                "the PNG is cut short: its IDAT chunk declares \(declared) bytes and \(declared / 2) follow"
            ),
            (whole.prefix(end), "the PNG is cut short: its bytes end after its IDAT chunk, without the IEND chunk that closes a PNG"),
            (whole.prefix(end + 3), "the PNG is cut short: its bytes end after its IDAT chunk, without the IEND chunk that closes a PNG"),
            (whole.prefix(8), "the PNG is cut short: its bytes end after its signature, without the IEND chunk that closes a PNG"),
            (Data(flipped), "the PNG is damaged: its IDAT chunk at byte \(imageData) does not match its CRC"),
            (Data(badEnd), "the PNG is damaged: its IEND chunk at byte \(end) does not match its CRC"),
            (
                whole.prefix(8) + Data(repeating: UInt8(ascii: "x"), count: 24),
                #"the PNG is damaged: its first chunk is "xxxx", where every PNG starts with IHDR"#
            ),
        ]
        for (data, damage) in cases {
            for source in try Self.sources(data, in: directory) {
                #expect(FileDamage.reason(in: source) == damage, "\(data.count) bytes")
            }
        }
    }

    /// A whole PNG, one with an ancillary chunk that fails its CRC (libpng drops it and reads
    /// on), bytes after IEND and files that are not PNGs have no damage to name.
    @Test func wholeChunksHaveNoDamage() throws {
        let directory = try TemporaryDirectory()
        let whole = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        var withBadText = [UInt8](whole)
        withBadText.insert(contentsOf: [0, 0, 0, 2] + Array("tEXtab".utf8) + [0, 0, 0, 0], at: 33)
        let notPNG = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for data in [whole, Data(withBadText), whole + Data(repeating: 7, count: 100), notPNG, Data()] {
            for source in try Self.sources(data, in: directory) {
                #expect(FileDamage.reason(in: source) == nil, "\(data.count) bytes")
            }
        }
        // The same chunk made critical ("TEXt") is damage.
        var withBadCritical = withBadText
        withBadCritical[37] = UInt8(ascii: "T")
        for source in try Self.sources(Data(withBadCritical), in: directory) {
            #expect(FileDamage.reason(in: source) == "the PNG is damaged: its TEXt chunk at byte 33 does not match its CRC")
        }
    }
}

/// Compressed text and profiles before the pixels, which libpng inflates and keeps while
/// libvips reads the header: counted, and a file past the limit refused before libvips sees it.
extension PNGStructureTests {
    /// A 16×16 PNG with `chunks` chunks of `type` before its pixels, each `size` bytes of "A"
    /// compressed, after a keyword and what else the type puts before its compressed bytes.
    /// With `wrongChecksum`, each stream's Adler-32 is wrong, which libpng, as libvips sets
    /// it, does not check. With `cutShort`, each stream lacks its last eight bytes.
    static func png(
        with chunks: Int, of type: String, inflatingTo size: Int, wrongChecksum: Bool = false, cutShort: Bool = false
    ) throws -> Data {
        let whole = [UInt8](try Fixtures.png(try Fixtures.solid(width: 16, height: 16)))
        var text = Self.zlib([UInt8](repeating: 0x41, count: size))
        if wrongChecksum { text[text.count - 1] ^= 0xFF }
        if cutShort { text.removeLast(8) }
        let prefix: [UInt8] =
            switch type {
            case "iTXt": Array("Comment".utf8) + [0, 1, 0] + Array("en".utf8) + [0, 0]
            default: Array("Comment".utf8) + [0, 0]
            }
        var inserted: [UInt8] = []
        for _ in 0..<chunks { inserted += Self.chunk(type, prefix + text) }
        return Data(whole[..<33] + inserted + whole[33...])
    }

    /// A PNG chunk: its length, type, data and checksum.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        let crc = typed.withUnsafeBytes { UInt32(libdeflate_crc32(0, $0.baseAddress, $0.count)) }
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    /// `raw` as a zlib stream.
    static func zlib(_ raw: [UInt8]) -> [UInt8] {
        let compressor = libdeflate_alloc_compressor(6)
        defer { libdeflate_free_compressor(compressor) }
        var out = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, raw.count))
        let count = raw.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { libdeflate_zlib_compress(compressor, input.baseAddress, input.count, $0.baseAddress, $0.count) }
        }
        return Array(out.prefix(count))
    }

    @Test(arguments: ["zTXt", "iTXt", "iCCP"])
    func compressedMetadataPastTheLimitIsRefusedBeforeLibvipsReadsIt(type: String) throws {
        let directory = try TemporaryDirectory()
        // A megabyte each: twenty are past the limit; a few (and a whole file) are not
        let limit = PNGStructure.inflatedMetadataLimit
        let bomb = try Self.png(with: 20, of: type, inflatingTo: 1 << 20, wrongChecksum: type == "zTXt")
        #expect(bomb.count < 100_000)
        for source in try Self.sources(bomb, in: directory) {
            #expect(
                PNGStructure.headerRefusal(in: source)
                    == "the PNG's compressed text and profile chunks before its pixels inflate to more than \(limit >> 20) MB "
                    + "(its \(type) chunk passes it): refused as a decompression bomb")
        }
        for data in [try Self.png(with: 3, of: type, inflatingTo: 1 << 20), try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))]
        {
            for source in try Self.sources(data, in: directory) { #expect(PNGStructure.headerRefusal(in: source) == nil) }
        }
    }

    /// Streams cut short, which libpng inflates as far as they go before it drops them, count
    /// too; one such chunk of a megabyte is no bomb.
    @Test func compressedMetadataCutShortCountsAsWhatItCanInflateTo() throws {
        let directory = try TemporaryDirectory()
        let bomb = try Self.png(with: 20, of: "zTXt", inflatingTo: 1 << 20, cutShort: true)
        for source in try Self.sources(bomb, in: directory) {
            #expect(PNGStructure.headerRefusal(in: source)?.contains("refused as a decompression bomb") == true)
        }
        for source in try Self.sources(try Self.png(with: 1, of: "zTXt", inflatingTo: 1 << 20, cutShort: true), in: directory) {
            #expect(PNGStructure.headerRefusal(in: source) == nil)
        }
    }

    /// A file cut inside a chunk's checksum says so, where it said more bytes followed than were declared.
    @Test func aFileCutInAChecksumSaysSo() throws {
        let directory = try TemporaryDirectory()
        let whole = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        for source in try Self.sources(whole.prefix(8 + 8 + 13 + 1), in: directory) {
            #expect(
                PNGStructure.headerRefusal(in: source)
                    == "the PNG is cut short: its IHDR chunk has its 13 bytes but not the checksum after them")
        }
    }

    /// Padding of empty chunks does not carry a bomb past the count: a file with more chunks
    /// before its pixels than any image has is refused, and text a little under the limit,
    /// stored rather than compressed, is not.
    @Test func paddingIsRefusedAndIncompressibleTextUnderTheLimitIsNot() throws {
        let directory = try TemporaryDirectory()
        let whole = [UInt8](try Fixtures.png(try Fixtures.solid(width: 16, height: 16)))
        let padding = (0...PNGStructure.chunksWalked).flatMap { _ in Self.chunk("paDd", []) }
        let padded = Data(whole[..<33] + padding + whole[33...])
        for source in try Self.sources(padded, in: directory) {
            #expect(PNGStructure.headerRefusal(in: source)?.contains("more than 10000 chunks before its pixels") == true)
        }
        // Noise a thousand bytes under the limit, which deflate stores: its stream is longer than its text
        var generator = SeededGenerator(seed: 7)
        var noise = [UInt8](repeating: 0, count: PNGStructure.inflatedMetadataLimit - 1000)
        noise.withUnsafeMutableBytes { buffer in
            for offset in stride(from: 0, to: buffer.count - 7, by: 8) {
                buffer.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
            }
        }
        let text = Self.zlib(noise)
        #expect(text.count > noise.count)
        let stored = Data(whole[..<33] + Self.chunk("zTXt", Array("Comment".utf8) + [0, 0] + text) + whole[33...])
        for source in try Self.sources(stored, in: directory) { #expect(PNGStructure.headerRefusal(in: source) == nil) }
    }
}
