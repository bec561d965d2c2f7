import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// What a pyramid's tile format asks of the rest: an IIIF 3 descriptor names tiles other than
/// JPEG, and JPEG tiles of a transparent image are flattened as the jpeg encoder flattens.
extension TilePyramidTests {
    @Test(arguments: ["webp", "png", "jpeg"]) func anIIIF3InfoNamesTilesOtherThanJPEG(format: String) async throws {
        // Given an IIIF 3 pyramid in `format`
        let (directory, json) = try setUp(tiles: #"{"layout": "iiif3", "format": "\#(format)"}"#, path: "out/{stem}")
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 0, "\(reports.flatMap(\.failures))")

        // Then its info.json is JSON, and names WebP and PNG tiles as the formats to ask for,
        // which a level-0 service is not assumed to have; JPEG ones it need not name
        let data = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo/info.json"))
        let info = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let named = format == "jpeg" ? nil : [format]
        #expect(info["extraFormats"] as? [String] == named && info["preferredFormats"] as? [String] == named, "\(info)")
        #expect(info["scaleFactors"] == nil && (info["tiles"] as? [[String: Any]])?.isEmpty == false)
        let suffix = "/default." + (format == "jpeg" ? "jpg" : format)
        #expect(TemporaryDirectory.files(below: directory.path + "/out/photo").contains { $0.hasSuffix(suffix) })
    }

    @Test func jpegTilesOfATransparentImageAreFlattenedOntoWhite() async throws {
        // Given a PNG, transparent but for a black square in its corner
        let directory = try TemporaryDirectory()
        let clear = try Fixtures.solid(width: 600, height: 400, colour: [0, 0, 0, 0])
        let square = try Fixtures.solid(width: 50, height: 50, colour: [0, 0, 0, 255])
        let logo = try #require(
            try Vips.call("insert", ["main": .image(clear), "sub": .image(square), "x": .integer(0), "y": .integer(0)])["out"]?.image)
        try directory.write(try Fixtures.png(logo), to: "in/logo.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "zoom", "tiles": {"layout": "dz", "format": "jpeg"}, "path": "out/{stem}.dzi"}"#])

        // When its pyramid is written in JPEG tiles
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 0, "\(reports.flatMap(\.failures))")

        // Then the transparent part is white, as a jpeg output's is, and the square still black
        let tile = try VipsImage.open(file: directory.path + "/out/logo_files/10/0_0.jpg")
        #expect(Fixtures.isClose(try tile.pixel(x: 200, y: 200), [255, 255, 255], tolerance: 3))
        #expect(Fixtures.isClose(try tile.pixel(x: 10, y: 10), [0, 0, 0], tolerance: 8))
    }

    @Test func aGoogleLayoutWritesTilesOfTheBackgroundColourToo() async throws {
        // Given a white image with a black square in a corner: most of its tiles plain white
        let directory = try TemporaryDirectory()
        let white = try Fixtures.solid(width: 600, height: 400, colour: [255, 255, 255])
        let square = try Fixtures.solid(width: 50, height: 50, colour: [0, 0, 0])
        let page = try #require(
            try Vips.call("insert", ["main": .image(white), "sub": .image(square), "x": .integer(0), "y": .integer(0)])["out"]?.image)
        try directory.write(try Fixtures.png(page), to: "in/page.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "map", "tiles": {"layout": "google", "format": "png"}, "path": "out/{stem}"}"#])

        // When its pyramid is written in the google layout
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)

        // Then it is made, with every tile of its deepest level, the white ones too
        #expect(summary.failed == 0, "\(reports.flatMap(\.failures))")
        let tiles = TemporaryDirectory.files(below: directory.path + "/out/page").filter { $0.hasPrefix("2/") }
        #expect(tiles.count == 6, "\(tiles)")
    }
}
