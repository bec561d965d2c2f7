import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The walk over a PNG's chunk lengths that refuses, before libpng sees it, a chunk before the
/// pixels declaring more bytes than the file has.
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
}
