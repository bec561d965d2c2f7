import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// A pyramid made again replaces its folder whole, and what the folder holds goes with it: an
/// earlier pyramid's tiles may, in any layout, format and size; a user's own files, or another
/// layout's pyramid, may not.
@Suite struct TilePyramidFolderTests {
    /// `p.json` in `directory`: one input, one pyramid output of `layout` and `format`, at `out/photo`.
    func writePipeline(_ directory: TemporaryDirectory, layout: TileSettings.Layout, format: String) throws -> String {
        let path = layout == .dz ? "out/{stem}.dzi" : "out/{stem}"
        let output =
            #"{"name": "zoom", "tiles": {"layout": "\#(layout.rawValue)", "format": "\#(format)", "size": 128}, "path": "\#(path)"}"#
        return try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]).utf8), to: "p.json")
    }

    @Test(arguments: TileSettings.Layout.allCases)
    func anEarlierPyramidIsReplacedAndAUsersOwnFileIsNot(layout: TileSettings.Layout) throws {
        // Given a pyramid made once
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 700, height: 300)), to: "in/photo.jpg")
        let made = try CommandRunner.run(["run", "--quiet", try writePipeline(directory, layout: layout, format: "jpeg")])
        try #require(made.status == 0, "\(made.standardError)")
        let folder = layout.replacedFolder(ofPyramidAt: directory.path + (layout == .dz ? "/out/photo.dzi" : "/out/photo"))

        // When it is made again in another tile format, it replaces the earlier one
        let again = try CommandRunner.run(["run", "--quiet", try writePipeline(directory, layout: layout, format: "png")])
        #expect(again.status == 0, "\(again.standardError)")
        let files = TemporaryDirectory.files(below: folder)
        #expect(!files.isEmpty && !files.contains { $0.hasSuffix(".jpg") }, "\(files.prefix(5))")

        // But when the folder also holds a user's own file, the next pyramid leaves the folder as it is
        try directory.write(Data("my notes".utf8), to: String(folder.dropFirst(directory.path.count + 1)) + "/notes.txt")
        let refused = try CommandRunner.run(["run", "--quiet", try writePipeline(directory, layout: layout, format: "webp")])
        #expect(refused.status == 1, "\(refused.standardError)")
        #expect(refused.standardError.contains("holds notes.txt, which no \(layout.rawValue) pyramid holds"), "\(refused.standardError)")
        #expect(FileManager.default.fileExists(atPath: folder + "/notes.txt"))
        #expect(!TemporaryDirectory.files(below: folder).contains { $0.hasSuffix(".webp") })
    }

    @Test func anotherLayoutsPyramidIsNotReplaced() throws {
        // Given a DeepZoom pyramid's tiles folder where a Google pyramid is then asked for
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 700, height: 300)), to: "in/photo.jpg")
        let made = try CommandRunner.run(["run", "--quiet", try writePipeline(directory, layout: .dz, format: "jpeg")])
        try #require(made.status == 0, "\(made.standardError)")
        let output = #"{"name": "map", "tiles": {"layout": "google"}, "path": "out/{stem}_files"}"#
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]).utf8), to: "q.json")

        // When it runs, the DeepZoom tiles stay
        let refused = try CommandRunner.run(["run", "--quiet", file])
        #expect(refused.status == 1, "\(refused.standardError)")
        #expect(refused.standardError.contains("which no google pyramid holds"), "\(refused.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo_files/0/0_0.jpg"))
    }
}
