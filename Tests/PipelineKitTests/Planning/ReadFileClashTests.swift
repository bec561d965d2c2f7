import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// Nothing a run writes lands on a file it reads besides its inputs: the pipeline file, a list
/// file, an overlay a step loads, S3's shared credentials. Each clash is refused before anything
/// runs, naming both, and the file read is left as it was.
@Suite struct ReadFileClashTests {
    /// A folder with two photos, a list file naming one, an overlay, and a pipeline file `p.json`
    /// whose one output composites the overlay, written to `outputPath`.
    func folder(outputPath: String = "out/{stem}.png", extra: String = "") throws -> (TemporaryDirectory, URL) {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30))
        try directory.write(photo, to: "in/a.jpg")
        try directory.write(photo, to: "in/b.jpg")
        try directory.write(Data("in/a.jpg\n".utf8), to: "list.txt")
        try directory.write(try Fixtures.solid(width: 8, height: 8).encoded(suffix: ".png"), to: "logo.png")
        let json = """
            {"version": 1, "inputs": [{"list": "list.txt"}, "in/b.jpg"], \(extra.isEmpty ? "" : extra + ",")
             "outputs": [{"name": "o", "steps": [{"composite": {"image": "logo.png"}}], "encode": {"format": "png"}, "path": "\(outputPath)"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "p.json")
        return (directory, URL(fileURLWithPath: file))
    }

    /// The planning error of the pipeline file `file`, as text, or nil when its plan was accepted.
    func planningError(_ file: URL, sideWrites: [SideWrite] = [], environment: [String: String]? = nil) throws -> String? {
        var pipeline = try Pipeline(contentsOf: file, processors: .standard, displayName: "p.json")
        pipeline.sideWrites = sideWrites
        if let environment { pipeline.environment = environment }
        do {
            _ = try pipeline.plan()
            return nil
        } catch {
            return "\(error)"
        }
    }

    func bytes(_ directory: TemporaryDirectory, _ name: String) throws -> Data {
        try Data(contentsOf: directory.url.appendingPathComponent(name))
    }

    @Test func aTraceOrReportOntoThePipelineFileIsRefused() throws {
        // Given a pipeline file, and a trace named on the command line that is that file
        let (directory, file) = try folder()
        let before = try bytes(directory, "p.json")
        let error = try #require(try planningError(file, sideWrites: [SideWrite(what: "the trace (--trace)", path: file.path)]))
        // Then the plan is refused, naming both, and the file is as it was
        #expect(error.contains("the trace (--trace) would overwrite the pipeline file p.json"), "\(error)")
        #expect(try bytes(directory, "p.json") == before)
        // The same through a symbolic link to its folder
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/alias", withDestinationPath: ".")
        let linked = try #require(
            try planningError(file, sideWrites: [SideWrite(what: "the report (--report)", path: directory.path + "/alias/p.json")]))
        #expect(linked.contains("the report (--report) would overwrite the pipeline file p.json"), "\(linked)")
    }

    @Test func aTraceOntoAListFileIsRefused() throws {
        let (directory, file) = try folder()
        let error = try #require(
            try planningError(file, sideWrites: [SideWrite(what: "the trace (--trace)", path: directory.path + "/list.txt")]))
        #expect(error.contains("the trace (--trace) would overwrite the input list \(directory.path)/list.txt"), "\(error)")
    }

    @Test func anOutputOrTheManifestOntoAnOverlayIsRefused() throws {
        // Given an output written where the overlay its step loads is
        let (outputFolder, overOutput) = try folder(outputPath: "logo.png")
        let outputError = try #require(try planningError(overOutput))
        #expect(outputError.contains("output \"o\" of in/b.jpg would overwrite the file"), "\(outputError)")
        #expect(outputError.contains("\(outputFolder.path)/logo.png that output \"o\"'s composite step reads"), "\(outputError)")
        // Given the manifest written there
        let (directory, overManifest) = try folder(extra: #""manifest": {"path": "logo.png"}"#)
        let manifestError = try #require(try planningError(overManifest))
        #expect(manifestError.contains("the manifest would overwrite the file \(directory.path)/logo.png"), "\(manifestError)")
    }

    @Test func anOutputOntoTheS3CredentialsFileIsRefused() throws {
        let (directory, file) = try folder(outputPath: "credentials")
        try directory.write(Data("[default]\n".utf8), to: "credentials")
        let error = try #require(
            try planningError(file, environment: ["AWS_SHARED_CREDENTIALS_FILE": directory.path + "/credentials", "HOME": directory.path]))
        #expect(error.contains("would overwrite the S3 credentials file \(directory.path)/credentials"), "\(error)")
    }

    @Test func filesThatAreReadButNotWrittenOverPlanAsBefore() throws {
        let (directory, file) = try folder()
        #expect(
            try planningError(
                file, sideWrites: [SideWrite(what: "the trace (--trace)", path: directory.path + "/trace.json")])
                == nil)
    }

    /// A list saved on Windows (CRLF) or an old Mac (CR) names one input a line, as one with LF,
    /// and a comment line hides only itself.
    @Test func aListWithCRLFOrCRLinesNamesOneInputALine() throws {
        let (directory, file) = try folder()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/c.jpg")
        for text in ["# photos\r\nin/a.jpg\r\nin/c.jpg\r\n", "in/a.jpg\rin/c.jpg\r", "in/a.jpg\n\r\nin/c.jpg"] {
            try directory.write(Data(text.utf8), to: "list.txt")
            let plan = try Pipeline(contentsOf: file, processors: .standard, displayName: "p.json").plan()
            let names = plan.items.map(\.input.displayName).sorted()
            #expect(names == ["in/a.jpg", "in/b.jpg", "in/c.jpg"], "\(text.debugDescription): \(names)")
        }
    }

    /// A tile pyramid replaces its folder whole (DeepZoom's `NAME_files`, a IIIF folder): an input
    /// or an overlay in it would go with the old tiles.
    @Test func aPyramidWhoseFolderHoldsWhatTheRunReadsIsRefused() throws {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30))
        try directory.write(photo, to: "in/a.jpg")
        try directory.write(photo, to: "in/b.jpg")
        try directory.write(photo, to: "tiles/a_files/kept.jpg")
        try directory.write(photo, to: "iiif/b/deeper/other.jpg")
        try directory.write(try Fixtures.solid(width: 8, height: 8).encoded(suffix: ".png"), to: "iiif/a/logo.png")
        let json = """
            {"version": 1, "inputs": ["in/*.jpg", "tiles/a_files/kept.jpg", "iiif/b/deeper/other.jpg"],
             "outputs": [{"name": "dz", "inputs": ["in/a.jpg"], "tiles": {"layout": "dz"}, "path": "tiles/{stem}.dzi"},
                         {"name": "ii", "steps": [{"composite": {"image": "iiif/a/logo.png"}}], "tiles": {"layout": "iiif"},
                          "path": "iiif/{stem}"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "p.json")
        let error = try #require(try planningError(URL(fileURLWithPath: file)))
        let real = try #require(WriteCheck.realPath(directory.path))
        for (writer, folder, read) in [
            ("dz", "tiles/a_files", "the input tiles/a_files/kept.jpg"), ("ii", "iiif/b", "the input iiif/b/deeper/other.jpg"),
            ("ii", "iiif/a", "logo.png"),
        ] {
            #expect(
                error.contains(#"output "\#(writer)""#) && error.contains("would replace the folder \(real)/\(folder) whole, and "),
                "\(error)")
            #expect(error.contains(read), "\(read) in \(error)")
        }
        #expect(FileManager.default.fileExists(atPath: directory.path + "/tiles/a_files/kept.jpg"))
    }
}
