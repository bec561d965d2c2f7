import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Nothing a run writes lands on what it reads, however the path is spelled: through a
/// symbolic link, as the manifest, the journal, or a file named on the command line.
@Suite struct WriteCheckTests {
    func photos(in directory: TemporaryDirectory) throws -> Data {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in 0..<3 { try directory.write(photo, to: "in/dune-\(index).jpg") }
        return photo
    }

    func output(path: String, format: String = "jpeg") -> String {
        #"{"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    /// The planning error, as text, or nil when the plan was accepted.
    func planningError(_ json: String, in directory: TemporaryDirectory, sideWrites: [SideWrite] = []) throws -> String? {
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.sideWrites = sideWrites
        do {
            _ = try pipeline.plan()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func anOutputFolderThatIsASymlinkToTheInputFolderIsRefused() throws {
        // Given "alias", a symbolic link to the input folder, as the output folder
        let directory = try TemporaryDirectory()
        let photo = try photos(in: directory)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/alias", withDestinationPath: "in")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output(path: "alias/{stem}.jpg")])
        // When it is planned
        let error = try #require(try planningError(json, in: directory))
        // Then the write is refused, naming the output and the input
        #expect(error.contains("output \"t\" of in/dune-0.jpg would overwrite the input in/dune-0.jpg"), "\(error)")
        #expect(error.contains("symbolic link"), "\(error)")
        // and the inputs are as they were
        for index in 0..<3 { #expect(try Data(contentsOf: directory.url.appendingPathComponent("in/dune-\(index).jpg")) == photo) }
    }

    @Test func aManifestOverAnInputOrAnOutputIsRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let outputs = [output(path: "out/{stem}.jpg")]
        // Given a manifest written where an input is
        let overInput = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs, extra: #""manifest": {"path": "in/dune-1.jpg"}"#)
        let first = try #require(try planningError(overInput, in: directory))
        #expect(first.contains("the manifest would overwrite the input in/dune-1.jpg"), "\(first)")
        // named where the file writes its path, as a section or a path alone
        #expect(first.contains(":1:"), "\(first)")
        let alone = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs, extra: #""manifest": "in/dune-1.jpg""#)
        let named = try #require(try planningError(alone, in: directory))
        #expect(named.contains(":1:") && named.contains("manifest.path: the manifest would overwrite the input"), "\(named)")
        // Given a manifest written where an output goes
        let overOutput = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs, extra: #""manifest": {"path": "out/dune-2.jpg"}"#)
        let second = try #require(try planningError(overOutput, in: directory))
        #expect(second.contains("the manifest and output \"t\" of in/dune-2.jpg would both write"), "\(second)")
    }

    @Test func aTraceOrReportOverAnInputIsRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output(path: "out/{stem}.jpg")])
        // Given a trace whose path spells an input through "./"
        let trace = SideWrite(what: "the trace (--trace)", path: directory.path + "/in/./dune-2.jpg")
        let error = try #require(try planningError(json, in: directory, sideWrites: [trace]))
        #expect(error.contains("the trace (--trace) would overwrite the input in/dune-2.jpg"), "\(error)")
        // A trace elsewhere is accepted
        #expect(
            try planningError(json, in: directory, sideWrites: [SideWrite(what: "the trace", path: directory.path + "/trace.json")]) == nil)
    }

    /// A file planned where another write needs a folder cannot be both: an output's file that
    /// is another output's folder, or the manifest or a report named as the outputs' folder.
    @Test func aFilePlannedWhereAnotherWriteNeedsAFolderIsRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let outputs = [
            output(path: "out/{stem}.jpg"),
            #"{"name": "u", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg/{stem}.jpg"}"#,
        ]
        let nested = try #require(try planningError(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs), in: directory))
        #expect(
            nested.contains(
                "output \"t\" of in/dune-0.jpg would write the file \(directory.path)/out/dune-0.jpg, which output \"u\" of "
                    + "in/dune-0.jpg needs as a folder (for \(directory.path)/out/dune-0.jpg/dune-0.jpg)"), "\(nested)")

        let one = [output(path: "site/img/{stem}.jpg")]
        let manifest = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: one, extra: #""manifest": "site""#)
        let error = try #require(try planningError(manifest, in: directory))
        #expect(error.contains("manifest.path: the manifest would write the file \(directory.path)/site, which output \"t\""), "\(error)")
        let report = SideWrite(what: "the report (--report)", path: directory.path + "/site/img/dune-1.jpg/index.html")
        let reported = try #require(
            try planningError(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: one), in: directory, sideWrites: [report]))
        #expect(
            reported.contains("would write the file \(directory.path)/site/img/dune-1.jpg, which the report (--report) needs as a folder"),
            "\(reported)")
        // Nothing made
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/site"))
    }

    /// An output whose path is named once its file is made (`{hash}`, an unfixed `{width}`) may
    /// land on the manifest or a trace: refused as one with a known path would be, and a name
    /// it cannot take (another extension, an `{hash}` of the wrong length) is accepted.
    @Test(arguments: ["out/{stem}.{hash}.jpg", "out/{stem}-{width}.jpg"])
    func aManifestOrTraceAnOutputNamedOnceMadeMayWriteIsRefused(path: String) throws {
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let outputs = [#"{"name": "t", "steps": [{"resize": {"height": 16}}], "encode": {"format": "jpeg"}, "path": "\#(path)"}"#]
        let made = path.contains("{hash}") ? "out/dune-1.0123456789.jpg" : "out/dune-1-21.jpg"
        let manifest = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs, extra: #""manifest": "\#(made)""#)
        let error = try #require(try planningError(manifest, in: directory))
        #expect(error.contains("the manifest is at \(directory.path)/\(made), which output \"t\" of in/dune-1.jpg may write"), "\(error)")
        #expect(error.components(separatedBy: "may write").count == 2, "reported once: \(error)")
        let trace = SideWrite(what: "the trace (--trace)", path: directory.path + "/" + made)
        let traced = try #require(
            try planningError(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs), in: directory, sideWrites: [trace]))
        #expect(traced.contains("the trace (--trace) is at"), "\(traced)")
        for elsewhere in ["out/dune-1.0123456789.json", "out/dune-1.01234567.jpg", "out/manifest.json"] {
            let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs, extra: #""manifest": "\#(elsewhere)""#)
            #expect(try planningError(json, in: directory) == nil, "\(elsewhere)")
        }
    }

    /// An input replaced after planning gives up its identity, which the file system may give
    /// to an output made since (as a server's long-lived plan meets): that output is no input,
    /// and is written. Here a hard link keeps the old identity at the output's path.
    @Test func anOutputWithTheIdentityOfAnInputReplacedSinceThePlanIsWritten() async throws {
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["in/dune-0.jpg"], outputs: [output(path: "out/{stem}.jpg")]), in: directory)
        let plan = try pipeline.plan()
        // the planned input's file now only at the output's path, a new file at the input's
        try FileManager.default.createDirectory(atPath: directory.path + "/out", withIntermediateDirectories: true)
        #expect(link(directory.path + "/in/dune-0.jpg", directory.path + "/out/dune-0.jpg") == 0)
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/new.jpg")
        #expect(rename(directory.path + "/in/new.jpg", directory.path + "/in/dune-0.jpg") == 0)

        let result = await pipeline.run(plan).collect()
        #expect(result.summary?.succeeded == 1, "\(result.reports.flatMap(\.failures))")
        #expect(try VipsImage.open(file: directory.path + "/out/dune-0.jpg").width == 16)
    }

    @Test func inputsInTheCacheFolderAreRefused() throws {
        // Given inputs in the folder that holds the journal and the cache
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [output(path: "out/{stem}.jpg")], extra: #""cache": {"directory": "in"}"#)
        // When it is planned, then it is refused, naming an input and the folder
        let error = try #require(try planningError(json, in: directory))
        #expect(error.contains("the input in/dune-0.jpg lies in the cache folder"), "\(error)")
    }

    @Test func theCommitDoesNotRenameOverAnInputReachedThroughALinkMadeLater() throws {
        // Given an input, and an output path that reaches it through a link made after planning
        let directory = try TemporaryDirectory()
        let photo = try photos(in: directory)
        let input = directory.path + "/in/dune-0.jpg"
        let protected = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output(path: "out/{stem}.jpg")]), in: directory
        ).plan().protectedInputs
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/alias", withDestinationPath: "in")
        // When an output is written there and committed
        #expect {
            let file = try ImageWriter.writeUncommitted(
                to: directory.path + "/alias/dune-0.jpg", root: directory.path,
                protecting: protected
            ) { descriptor throws(ItemError) in
                _ = write(descriptor, "not a photo", 11)
            }
            _ = try file.commit()
        } throws: { error in
            (error as? ItemError)?.reason.contains("is the input in/dune-0.jpg") == true
        }
        // Then the input is untouched and no temporary file is left
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == photo)
        #expect(directory.allFiles().filter { $0.contains(ImageWriter.temporaryMarker) }.isEmpty)
    }

    @Test func anOutputThatIsAHardLinkToAnInputIsRefusedNamingTheOutputsPath() throws {
        // Given out/dune-0.jpg, where the output writes, as a hard link to another input
        let directory = try TemporaryDirectory()
        let photo = try photos(in: directory)
        try FileManager.default.createDirectory(atPath: directory.path + "/out", withIntermediateDirectories: false)
        #expect(link(directory.path + "/in/dune-1.jpg", directory.path + "/out/dune-0.jpg") == 0)
        // When it is planned
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output(path: "out/{stem}.jpg")])
        let error = try #require(try planningError(json, in: directory))
        // Then the write is refused, naming the input and the path that is the same file
        #expect(
            error.contains(
                "output \"t\" of in/dune-0.jpg would overwrite the input in/dune-1.jpg "
                    + "(\(directory.path)/out/dune-0.jpg is that file, by a hard link or a mount)"), "\(error)")
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("in/dune-1.jpg")) == photo)
    }

    @Test func anInputGlobThatTakesInTheOutputsIsRefusedBeforeTheFirstRun() async throws {
        // Given "**/*.jpg" as the inputs and JPEG outputs in out/, which the glob reaches
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let json = PipelineHarness.json(inputs: ["**/*.jpg"], outputs: [output(path: "out/{stem}.jpg")])
        // When it is planned, before any output exists
        let error = try #require(try planningError(json, in: directory))
        // Then the glob is named as what takes the output in, with the first path it would take
        #expect(
            error.contains(
                #"inputs[0]: "**/*.jpg" takes in what output "t" writes (out/dune-0.jpg): the next run would read it as an input"#),
            "\(error)")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
        // and a glob that does not reach the outputs, or outputs it does not match, plan and run
        #expect(
            try planningError(PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [output(path: "out/{stem}.jpg")]), in: directory)
                == nil)
        let webp = PipelineHarness.json(inputs: ["**/*.jpg"], outputs: [output(path: "out/{stem}.webp", format: "webp")])
        #expect(try planningError(webp, in: directory) == nil)
        let (_, summary) = try await PipelineHarness.run(webp, in: directory)
        #expect(summary.succeeded == 3)
        let (_, again) = try await PipelineHarness.run(webp, in: directory)
        #expect(again.succeeded == 3 && again.outputsWritten == 0 && again.outputsUpToDate == 3)
    }

    @Test(arguments: [
        ("dz", "in/{stem}.dzi", "in/dune-0_files/0/0_0.jpg"), ("google", "in/{stem}-tiles", "in/dune-0-tiles/0/0/0.jpg"),
        ("zoomify", "in/{stem}-tiles", "in/dune-0-tiles/TileGroup0/0-0-0.jpg"),
        ("iiif", "in/{stem}-tiles", "in/dune-0-tiles/0,0,10,10/10,/0/default.jpg"),
    ])
    func aGlobReachingAPyramidsTilesIsRefusedBeforeTheFirstRun(layout: String, path: String, tile: String) throws {
        // Given "in/**/*.jpg" as the inputs and a pyramid in in/, whose path the glob does not
        // match but whose JPEG tiles it does
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let pyramid = #"{"name": "zoom", "tiles": {"layout": "\#(layout)"}, "path": "\#(path)"}"#
        // When it is planned
        let error = try #require(try planningError(PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [pyramid]), in: directory))
        // Then the glob is named with a tile it would take in
        #expect(error.contains(#"inputs[0]: "in/**/*.jpg" takes in what output "zoom" writes (\#(tile))"#), "\(error)")
        // and a glob of the tiles numbered from 1 (IIIF's are all default.jpg) is refused too
        let ones = try planningError(PipelineHarness.json(inputs: ["in/**/[1d]*.jpg"], outputs: [pyramid]), in: directory)
        #expect(ones?.contains(#""in/**/[1d]*.jpg" takes in what output "zoom" writes"#) == true, "\(ones ?? "")")
        // and tiles of a format the glob does not match plan
        let png = #"{"name": "zoom", "tiles": {"layout": "\#(layout)", "format": "png"}, "path": "\#(path)"}"#
        #expect(try planningError(PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [png]), in: directory) == nil)
    }

    @Test func aGlobReachingWhatTheRunWritesThroughALinkAListOrAsTheManifestIsRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try photos(in: directory)
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: directory.path + "/in/thumbs", withIntermediateDirectories: false)
        try fileManager.createDirectory(atPath: directory.path + "/made", withIntermediateDirectories: false)
        // The output folder a link into the glob's folder; the glob's folder a link to the outputs
        try fileManager.createSymbolicLink(atPath: directory.path + "/out", withDestinationPath: "in/thumbs")
        try fileManager.createSymbolicLink(atPath: directory.path + "/in/made", withDestinationPath: "../made")
        try directory.write(Data("# photos\nin/**/*.jpg\n".utf8), to: "list.txt")
        let cases: [(json: String, expected: String)] = [
            (
                PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [output(path: "out/{stem}.jpg")]),
                #"inputs[0]: "in/**/*.jpg" takes in what output "t" writes (out/dune-0.jpg)"#
            ),
            (
                PipelineHarness.json(inputs: ["in/*.jpg", "in/made/*.jpg"], outputs: [output(path: "made/{stem}.jpg")]),
                #"inputs[1]: "in/made/*.jpg" takes in what output "t" writes (made/dune-0.jpg)"#
            ),
            (
                // A wildcard folder of the glob that is the link, entered by the walk
                PipelineHarness.json(inputs: ["in/*.jpg", "in/*/*.jpg"], outputs: [output(path: "made/{stem}.jpg")]),
                #"inputs[1]: "in/*/*.jpg" takes in what output "t" writes (made/dune-0.jpg)"#
            ),
            (
                #"{"version": 1, "inputs": [{"list": "list.txt"}], "outputs": [\#(output(path: "in/small/{stem}.jpg"))]}"#,
                #"inputs[0].list: "in/**/*.jpg" takes in what output "t" writes (in/small/dune-0.jpg)"#
            ),
            (
                PipelineHarness.json(
                    inputs: ["in/**/*"], outputs: [output(path: ".out/{stem}.webp", format: "webp")],
                    extra: #""manifest": {"path": "in/manifest.json"}"#),
                #"inputs[0]: "in/**/*" takes in what the manifest writes (in/manifest.json)"#
            ),
        ]
        for (json, expected) in cases {
            // When each is planned, before anything is written
            let error = try #require(try planningError(json, in: directory), "\(expected)")
            // Then the glob is named, where the file writes it
            #expect(error.contains(":1:") && error.contains(expected), "\(error)")
        }
        #expect(try fileManager.contentsOfDirectory(atPath: directory.path + "/in/thumbs").isEmpty)
        #expect(try fileManager.contentsOfDirectory(atPath: directory.path + "/made").isEmpty)
    }
}
