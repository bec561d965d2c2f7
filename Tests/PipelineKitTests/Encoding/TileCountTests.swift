import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The tiles a whole pyramid has, by layout, against what libvips' dzsave writes: the count a
/// pyramid is checked by before it is put in place, since dzsave reports no tile it failed to
/// write.
@Suite struct TileCountTests {
    @Test(arguments: [
        (1, 1), (100, 60), (257, 257), (513, 2), (1000, 700), (1100, 1100), (1, 5000), (5000, 1), (4097, 3001),
    ])
    func theCountIsWhatLibvipsWrites(width: Int, height: Int) throws {
        let image = try Fixtures.solid(width: width, height: height, colour: Fixtures.grey)
        for (layout, size) in [(TileSettings.Layout.dz, 100), (.iiif, 512), (.iiif3, 300), (.zoomify, 100), (.google, 256)] {
            let directory = try TemporaryDirectory()
            try image.writeTilePyramid(
                to: directory.path + "/p", layout: layout.rawValue, tileSize: size, overlap: layout == .dz ? 1 : 0, tileSuffix: ".png")
            // Google's layout writes a blank tile for the map's edges beside its own.
            let blank = FileManager.default.fileExists(atPath: directory.path + "/p/blank.png") ? 1 : 0
            #expect(blank == (layout == .google ? 1 : 0))
            let written = TilePyramidWriter.contents(below: directory.path, tilesIn: .png).tiles - blank
            #expect(TileCount.expected(layout, width: width, height: height, tileSize: size) == written, "\(layout) \(width)×\(height)")
        }
    }
}
