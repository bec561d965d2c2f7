import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The folder a tile pyramid replaces whole each time it is made, against what else the run
/// puts there: another pyramid replacing the same folder, and the run's own files (the journal
/// in the cache folder, the manifest). Each would be removed, or remove the pyramid.
@Suite struct PyramidFolderPlanTests {
    /// The problems of planning `outputs` (with `extra` keys) over one photo, or none.
    func problems(_ outputs: [String], extra: String = "", in directory: TemporaryDirectory) throws -> [String] {
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "in/photo.jpg")
        do {
            _ = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs, extra: extra), in: directory)
                .plan()
            return []
        } catch let error as PipelineFileError {
            return error.problems.map(\.message)
        }
    }

    @Test func twoPyramidsReplacingOneFolderAreRefusedInEitherOrder() throws {
        // Given a DeepZoom pyramid, whose tiles are in `photo_files`, and a Google pyramid at that folder
        let directory = try TemporaryDirectory()
        let deepZoom = #"{"name": "zoom", "tiles": {"layout": "dz"}, "path": "out/{stem}.dzi"}"#
        let google = #"{"name": "map", "tiles": {"layout": "google"}, "path": "out/{stem}_files"}"#
        let folder = directory.url.resolvingSymlinksInPath().path + "/out/photo_files"
        // Then either order is one problem, naming the folder and both outputs
        for outputs in [[deepZoom, google], [google, deepZoom]] {
            let found = try problems(outputs, in: directory)
            #expect(found.count == 1, "\(found)")
            #expect(found.first?.contains("would replace \(folder) whole with its tiles each time it is made") == true, "\(found)")
            #expect(found.first?.contains("\"zoom\"") == true && found.first?.contains("\"map\"") == true, "\(found)")
        }
        // and two pyramids in folders of their own are none
        let apart = #"{"name": "map", "tiles": {"layout": "google"}, "path": "maps/{stem}"}"#
        #expect(try problems([deepZoom, apart], in: directory).isEmpty)
    }

    @Test(arguments: [
        (#""cache": {"directory": "out/photo/cache"}"#, "the journal"),
        (#""manifest": {"path": "out/photo/images.json"}"#, "the manifest"),
    ])
    func theRunsOwnFileInAPyramidsFolderIsRefused(extra: String, what: String) throws {
        // Given a IIIF pyramid at out/photo, and a file of the run's own in that folder
        let directory = try TemporaryDirectory()
        let iiif = #"{"name": "zoom", "tiles": {"layout": "iiif"}, "path": "out/{stem}"}"#
        let found = try problems([iiif], extra: extra, in: directory)
        // Then it is refused, naming both
        let folder = directory.url.resolvingSymlinksInPath().path + "/out/photo"
        #expect(found.count == 1, "\(found)")
        #expect(
            found.first?.hasPrefix(
                "output \"zoom\" of in/photo.jpg would replace the folder \(folder) whole each time it is made, and \(what) (")
                == true, "\(found)")
        // and beside the folder it is none
        let beside = extra.replacingOccurrences(of: "out/photo/", with: "out/")
        #expect(try problems([iiif], extra: beside, in: directory).isEmpty)
    }
}
