import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// What stands where a pyramid is put in place at its commit.
extension TilePyramidReplacementTests {
    /// A FIFO made where a pyramid goes, after the run was planned, is kept, and the pyramid
    /// fails: moved aside or exchanged, it would be lost to its reader.
    @Test(arguments: [TileSettings.Layout.dz, .iiif]) func aFIFOWhereThePyramidGoesIsKept(layout: TileSettings.Layout) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + (layout == .dz ? "/out/photo.dzi" : "/out/photo")
        let pending = try pyramid(width: 600, height: 400, layout: layout, path: path, root: directory.path)
        #expect(mkfifo(path, 0o600) == 0)
        let failure = #expect(throws: ItemError.self) { try pending.moveIntoPlace() }
        #expect(failure?.reason == "\(path) is a FIFO (named pipe): the pyramid was not put in its place")
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
    }
}
