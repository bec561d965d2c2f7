import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// What `InputInspector` reads of an input: its header through the decoder's checks, and for
/// placeholders a decode shrunk on load.
@Suite struct InputHeaderTests {
    static let settings = DecompressSettings(concurrency: 1, maxPixels: 100_000_000, autorotate: true, failOn: .truncated)

    func header(_ data: Data, settings: DecompressSettings = InputHeaderTests.settings) throws -> ImageDecoder.InputHeader {
        let directory = try TemporaryDirectory()
        let path = try directory.write(data, to: "input")
        return try ImageDecoder(settings: settings, outputs: []).header(of: .file(path: path, byteCount: Int64(data.count)))
    }

    @Test func formatsAreNamedAsEncodersNameThem() throws {
        let image = try Fixtures.gradient(width: 40, height: 30)
        let cases: [(suffix: String, format: String)] = [
            (".jpg", "jpeg"), (".png", "png"), (".webp", "webp"), (".gif", "gif"), (".tif", "tiff"), (".avif", "avif"),
        ]
        for (suffix, format) in cases {
            let read = try header(try image.encoded(suffix: suffix))
            #expect(read.format == format, "\(suffix)")
            #expect(read.stored == ImageSize(width: 40, height: 30), "\(suffix)")
        }
    }

    @Test func theSizeIsUprightAsTheRunTurnsIt() throws {
        let data = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32).withOrientation(6))
        let turned = try header(data)
        #expect(turned.orientation == 6)
        #expect(turned.stored == ImageSize(width: 48, height: 32))
        #expect(turned.upright == ImageSize(width: 32, height: 48))
        var stored = Self.settings
        stored.autorotate = false
        #expect(try header(data, settings: stored).upright == ImageSize(width: 48, height: 32))
    }

    @Test func theDecodersLimitsAndReasonsApply() throws {
        var small = Self.settings
        small.maxPixels = 1000
        let tooMany = #expect(throws: ItemError.self) {
            try header(try Fixtures.png(try Fixtures.gradient(width: 48, height: 32)), settings: small)
        }
        #expect(tooMany?.kind == .tooManyPixels)
        #expect(tooMany?.stage == .decompress)
        let unknown = #expect(throws: ItemError.self) { try header(Data("not an image at all".utf8)) }
        #expect(unknown?.kind == .unsupportedFormat)
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#.utf8)
        #expect((#expect(throws: ItemError.self) { try header(svg) })?.kind == .unsupportedFormat)
    }

    @Test func placeholdersAreMadeFromADecodeShrunkOnLoad() throws {
        let directory = try TemporaryDirectory()
        let data = try Fixtures.jpeg(try Fixtures.gradient(width: 3000, height: 2000))
        let path = try directory.write(data, to: "input.jpg")
        let decoded = try ImageDecoder(settings: Self.settings, outputs: [InputInspector.placeholderOutput])
            .decode(.file(path: path, byteCount: Int64(data.count)))
        #expect(decoded.shrink > 1)
        #expect(max(decoded.image.width, decoded.image.height) == InputInspector.placeholderSide)
        #expect(decoded.originalSize == ImageSize(width: 3000, height: 2000))
    }
}
