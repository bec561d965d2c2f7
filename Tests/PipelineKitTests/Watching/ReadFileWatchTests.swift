import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// `pipeline watch` (and `serve`) sees the files a pipeline reads beside its inputs (the focus
/// file, an ICC file an output embeds, the server's fallback image): a change to one is a
/// change that matters.
@Suite struct ReadFileWatchTests {
    @Test func theFocusFileIsWatched() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data(#"{"in/a.jpg": [0.5, 0.5]}"#.utf8), to: "points/focus.json")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "o", "steps": [{"resize": {"width": 10, "height": 10, "position": "focus"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ], extra: #""allowEmpty": true, "focusPoints": "points/focus.json""#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: directory.path + "/p.json")
        #expect(scope.isRelevant(file: directory.path + "/points/focus.json"))
        #expect(!scope.isRelevant(file: directory.path + "/points/other.json"))
        #expect(scope.directoriesToWatch().contains(directory.path + "/points"))
    }

    @Test func anICCFileAnOutputEmbedsIsWatched() throws {
        let directory = try TemporaryDirectory()
        let profile = ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        try directory.write(Data(profile), to: "colour/brand.icc")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "o", "encode": {"format": "jpeg", "iccProfile": "colour/brand.icc"}, "path": "out/{stem}.jpg"}"#],
            extra: #""allowEmpty": true"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: directory.path + "/p.json")
        #expect(scope.isRelevant(file: directory.path + "/colour/brand.icc"))
        #expect(!scope.isRelevant(file: directory.path + "/colour/other.icc"))
        #expect(scope.directoriesToWatch().contains(directory.path + "/colour"))
    }

    @Test func theServersFallbackImageIsWatched() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 4, height: 4, colour: Fixtures.grey)), to: "site/missing.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "o", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
            extra: #""allowEmpty": true, "serve": {"fallback": "site/missing.png"}"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: directory.path + "/p.json")
        #expect(scope.isRelevant(file: directory.path + "/site/missing.png"))
        #expect(!scope.isRelevant(file: directory.path + "/site/other.png"))
        #expect(scope.directoriesToWatch().contains(directory.path + "/site"))
    }

    /// Outputs written beside what the pipeline reads: a file is taken for one only when an
    /// output's template, with its name, its format and digits for sizes, can make it, and a file
    /// the pipeline names in full never is (a plan refuses to write one).
    @Test func aFileBesideTheOutputsIsTakenForOneOnlyWhenATemplateCanMakeIt() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 4, height: 4, colour: Fixtures.grey)), to: "my-logo.png")
        let json = PipelineHarness.json(
            inputs: ["photos/*.jpg"],
            outputs: [
                #"{"name": "t", "widths": [16], "formats": ["webp"], "path": "photos/{stem}-{width}.{format}"}"#,
                #"{"name": "logo", "steps": [{"composite": {"image": "my-logo.png"}}], "encode": {"format": "png"}, "path": "{stem}-{output}.{format}"}"#,
            ], extra: #""allowEmpty": true"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let base = directory.path
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: base + "/my-thumbs.json")
        for relevant in ["photos/dune-sunset.jpg", "photos/a.jpg", "my-thumbs.json", "my-logo.png"] {
            #expect(scope.isRelevant(file: base + "/" + relevant), "\(relevant)")
        }
        for written in ["photos/dune-sunset-16.webp", "photos/a-320.webp", "a-logo.png"] {
            #expect(scope.isWrittenByRuns(base + "/" + written), "\(written)")
        }
        for other in ["photos/dune-sunset.jpg", "photos/a-big.webp", "photos/a-16.png"] {
            #expect(!scope.isWrittenByRuns(base + "/" + other), "\(other)")
        }
    }

    /// A tile pyramid's folder stands for all it holds, and for nothing beside it; sizes are digits.
    @Test func aPyramidsFolderIsTakenForTheRunsAndTheFilesBesideItAreNot() throws {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["photos/*.jpg", "albums/*/*.jpg"],
            outputs: [
                #"{"name": "zoom", "tiles": {"layout": "iiif"}, "path": "photos/{stem}"}"#,
                #"{"name": "deep", "tiles": {"layout": "dz"}, "path": "photos/{stem}.dzi"}"#,
                #"{"name": "sized", "widths": [320], "formats": ["jpeg"], "path": "albums/{dir}/{width}/{stem}.{format}"}"#,
            ], extra: #""allowEmpty": true"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let base = directory.path
        let scope = WatchScope(definition: pipeline.definition, pipelineFile: base + "/p.json")
        for written in ["photos/a/info.json", "photos/a/0,0,512,512/512,/0/default.jpg", "photos/a.dzi", "photos/a_files/0/0_0.jpeg"] {
            #expect(scope.isWrittenByRuns(base + "/" + written), "\(written)")
        }
        for folder in ["photos/a", "photos/a_files"] {
            #expect(scope.isWrittenByRuns(base + "/" + folder, isFolder: true), "\(folder)")
        }
        // (an album named by digits alone would be a width's folder: "albums/2024/a.jpg" is one)
        for input in ["photos/new.jpg", "photos/a_b.jpg", "albums/2024-trip/a.jpg"] {
            #expect(scope.isRelevant(file: base + "/" + input), "\(input)")
        }
        #expect(!scope.isWrittenByRuns(base + "/albums/2024-trip", isFolder: true))
    }
}
