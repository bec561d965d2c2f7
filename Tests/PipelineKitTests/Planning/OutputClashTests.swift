import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Two outputs clash when they can write the same path for some input: decided from what each
/// placeholder can take, before the run.
@Suite struct OutputClashTests {
    func output(_ name: String, steps: String, format: String = "webp", path: String) -> String {
        #"{"name": "\#(name)", "steps": \#(steps), "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    func width(_ value: Int, withoutEnlargement: Bool = false) -> String {
        #"[{"resize": {"width": \#(value), "withoutEnlargement": \#(withoutEnlargement)}}]"#
    }

    /// The problems loading and planning `outputs` over one photo report, or none.
    func problems(_ outputs: [String], in directory: TemporaryDirectory) throws -> [PipelineFileError.Problem] {
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "in/photo.jpg")
        do {
            _ = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs), in: directory).plan()
            return []
        } catch let error as PipelineFileError {
            return error.problems
        }
    }

    @Test func oneTemplateWithWidthServesOutputsWhoseStepsFixDifferentWidths() async throws {
        // Given two outputs sharing `out/{stem}-{width}w.webp`, resized to 48 and 96 wide
        let directory = try TemporaryDirectory()
        let outputs = [
            output("w48", steps: width(48), path: "out/{stem}-{width}w.webp"),
            output("w96", steps: width(96), path: "out/{stem}-{width}w.webp"),
        ]
        #expect(try problems(outputs, in: directory).isEmpty)

        // When the pipeline runs
        let (_, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs), in: directory)

        // Then both files are written
        #expect(summary.succeeded == 1 && summary.outputsWritten == 2)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/photo-48w.webp", "out/photo-96w.webp"])
    }

    /// A file planned in the folder a tile pyramid replaces whole, before or after the pyramid
    /// in the file, is refused: each time the pyramid is made, the file is gone.
    @Test(arguments: [
        ("iiif", "img/{stem}", "img/{stem}/thumb.jpg", "img/photo"),
        ("dz", "dz/{stem}.dzi", "dz/{stem}_files/0/0_0.jpg", "dz/photo_files"),
        ("dz", "dz/{stem}.dzi", "dz/{stem}_files", "dz/photo_files"),
    ])
    func aFileInThePyramidsFolderIsRefused(layout: String, pyramid: String, file: String, folder: String) throws {
        let directory = try TemporaryDirectory()
        let zoom = #"{"name": "zoom", "tiles": {"layout": "\#(layout)"}, "path": "\#(pyramid)"}"#
        let thumb = output("thumb", steps: width(20), format: "jpeg", path: file)
        let root = directory.url.resolvingSymlinksInPath().path + "/"
        let before = try problems([thumb, zoom], in: directory).map(\.message)
        #expect(
            before == [
                "output \"zoom\" of in/photo.jpg would replace \(root + folder) whole with its tiles each time it is made, "
                    + "where output \"thumb\" of in/photo.jpg writes \(root + file.replacingOccurrences(of: "{stem}", with: "photo"))"
            ], "\(before)")
        let after = try problems([zoom, thumb], in: directory).map(\.message)
        #expect(
            after.count == 1
                && after[0].hasSuffix(
                    "in \(root + folder), which output \"zoom\" of in/photo.jpg replaces whole with its tiles each time it is made"),
            "\(after)")
        // Beside the pyramid's folder, not in it, is no clash.
        let beside = output("thumb", steps: width(20), format: "jpeg", path: "img/{stem}-thumb.jpg")
        #expect(try problems([zoom, beside], in: directory).isEmpty)
    }

    @Test func differentFormatsOrOutputNamesTellOneTemplateApart() throws {
        let directory = try TemporaryDirectory()
        #expect(
            try problems(
                [
                    output("a", steps: width(48), format: "webp", path: "out/{stem}.{format}"),
                    output("b", steps: width(48), format: "jpeg", path: "out/{stem}.{format}"),
                ], in: directory
            ).isEmpty)
        #expect(
            try problems(
                [
                    output("a", steps: width(48), path: "out/{output}/{stem}-{width}.webp"),
                    output("b", steps: width(48), path: "out/{output}/{stem}-{width}.webp"),
                ], in: directory
            ).isEmpty)
    }

    @Test(arguments: [
        // The same fixed width: the same files.
        ("[{\"resize\": {\"width\": 48}}]", "[{\"resize\": {\"width\": 48, \"kernel\": \"nearest\"}}]"),
        // A width that depends on the input (never enlarged) may come out as the other's.
        ("[{\"resize\": {\"width\": 48}}]", "[{\"resize\": {\"width\": 96, \"withoutEnlargement\": true}}]"),
        // No steps: the input's own width.
        ("[]", "[{\"resize\": {\"width\": 48}}]"),
        // Blurs keep the input's width, which is not fixed; {format} is the same.
        ("[{\"blur\": {\"sigma\": 1}}]", "[{\"blur\": {\"sigma\": 2}}]"),
    ])
    func outputsThatCanWriteTheSameFileAreStillRefused(_ steps: (String, String)) throws {
        let directory = try TemporaryDirectory()
        let found = try problems(
            [
                output("a", steps: steps.0, path: "out/{stem}-{width}w.{format}"),
                output("b", steps: steps.1, path: "out/{stem}-{width}w.{format}"),
            ], in: directory)
        #expect(found.count == 1)
        #expect(found.first?.path == "outputs[1].path")
        #expect(found.first?.message.contains("both would write the same files") == true)
    }

    @Test func aWidthNotFixedIsRefusedWhereItCouldMeetAnotherOutputsPath() throws {
        // Given a crop window (as wide as the image when narrower) beside an output whose path names that width
        let directory = try TemporaryDirectory()
        let found = try problems(
            [
                output("fixed", steps: width(48), path: "out/{stem}-48.webp"),
                output("window", steps: #"[{"crop": {"width": 48}}]"#, path: "out/{stem}-{width}.webp"),
            ], in: directory)
        #expect(found.count == 1)
        #expect(found.first?.path == "outputs[1].path")
        #expect(found.first?.message.contains("could both write") == true, "\(found)")

        // And with a width that cannot be 48, there is no clash
        #expect(
            try problems(
                [
                    output("fixed", steps: width(48), path: "out/{stem}-48.webp"),
                    output("other", steps: width(96), path: "out/{stem}-{width}.webp"),
                ], in: directory
            ).isEmpty)
    }

    @Test func pathPatternsMatchWhenSomeNumbersMakeThemEqual() {
        let n = String(PathPattern.number)
        func canMatch(_ a: String, _ b: String) -> Bool { PathPattern(a).canMatch(PathPattern(b)) }
        #expect(canMatch("/o/a-\(n)w.webp", "/o/a-480w.webp"))
        #expect(canMatch("/o/a-\(n)w.webp", "/o/a-\(n)w.webp"))
        #expect(canMatch("/o/a\(n).webp", "/o/a1\(n).webp"))
        #expect(canMatch("/o/\(n)x\(n).webp", "/o/12x3.webp"))
        #expect(!canMatch("/o/a-\(n)w.webp", "/o/a-w.webp"))
        #expect(!canMatch("/o/a-\(n)w.webp", "/o/a-48xw.webp"))
        #expect(!canMatch("/o/a-\(n)w.webp", "/o/b-\(n)w.webp"))
        #expect(!canMatch("/o/a.webp", "/o/a.jpg"))
    }

    @Test func aClashOfAnOutputWithWidthsOrFormatsNamesItsPlaceInTheFile() throws {
        // Two inputs with one stem in two folders: {stem} does not tell their files apart. The
        // output with widths is outputs[1] of the file, though it is the 3rd to 5th definition.
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "in/a/x.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "in/b/x.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"],
            outputs: [
                #"{"name": "thumbs", "encode": {"format": "webp"}, "widths": [32, 64], "path": "thumbs/{dir}/{stem}-{width}.webp"}"#,
                #"{"name": "web", "encode": {"format": "webp"}, "widths": [50, 100, 150], "path": "out/{stem}-{width}.webp"}"#,
            ])
        do {
            _ = try PipelineHarness.pipeline(json, in: directory).plan()
            Issue.record("the clash was not found")
        } catch let error as PipelineFileError {
            #expect(!error.problems.isEmpty)
            for problem in error.problems {
                #expect(problem.path == "outputs[1].path", "\(problem.path): \(problem.message)")
                #expect(problem.message.contains("would both write"), "\(problem.message)")
            }
        }
    }

    @Test func twoOutputsOfOneLocalInputWritingOneFileAreNamedWithoutTheNoteOnURLs() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "in/dune.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/dune.jpg"],
            outputs: [
                #"{"name": "a", "encode": {"format": "jpeg"}, "path": "o/{stem}.jpg"}"#,
                #"{"name": "b", "encode": {"format": "jpeg"}, "path": "o/{name}"}"#,
            ])
        do {
            _ = try PipelineHarness.pipeline(json, in: directory).plan()
            Issue.record("the clash was not found")
        } catch let error as PipelineFileError {
            #expect(
                error.problems.map(\.message) == [
                    #"output "b" of in/dune.jpg and output "a" of in/dune.jpg would both write \#(directory.path)/o/dune.jpg"#
                ], "\(error.problems)")
        }
    }

    /// Two outputs whose paths only the made images' sizes fill, and the other output whose
    /// path the first then takes: named by the input alone, or by a size too.
    enum Meeting: CaseIterable {
        case namedByTheInput, namedByASize
    }

    @Test(arguments: Meeting.allCases) func pathsThatMeetOnlyOnceASizeIsKnownAreWrittenOnce(meeting: Meeting) async throws {
        // Given an output named by the width it turns out to have, and another: x.jpg made 8 wide
        // by the first lands on out/x-8.png, as x-8.jpg does by the second named by the input
        // alone (or x-.jpg made 8 high by one named by its height), which planning cannot see
        let directory = try TemporaryDirectory()
        let byWidth = #"[{"resize": {"height": 6}}]"#
        let (outputs, photos): ([String], [(name: String, width: Int, height: Int)]) =
            switch meeting {
            case .namedByTheInput:
                (
                    [
                        output("by-width", steps: byWidth, format: "png", path: "out/{stem}-{width}.png"),
                        output("by-name", steps: width(8), format: "png", path: "out/{stem}.png"),
                    ], [("x.jpg", 32, 24), ("x-8.jpg", 40, 24)]
                )
            case .namedByASize:
                (
                    [
                        output("by-width", steps: byWidth, format: "png", path: "out/{stem}{width}.png"),
                        output("by-height", steps: width(8), format: "png", path: "out/{stem}-{height}.png"),
                    ], [("x-.jpg", 32, 24), ("x.jpg", 32, 32)]
                )
            }
        for photo in photos {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: photo.width, height: photo.height)), to: "in/" + photo.name)
        }

        // When the pipeline runs (planning finds nothing wrong)
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs), in: directory)

        // Then one file is written there and the other fails at its encode, naming it: the file
        // planned by that name whichever is made first, else the first made
        let failures = reports.flatMap(\.failures)
        #expect(summary.outputsWritten == 3 && failures.count == 1, "\(failures)")
        #expect(failures.first?.stage == .encode)
        switch meeting {
        case .namedByTheInput:
            #expect(failures.first?.input == "in/x.jpg" && failures.first?.output == "by-width")
            #expect(
                failures.first?.reason.contains(#"out/x-8.png is output "by-name"'s file of in/x-8.jpg, which it does not write over"#)
                    == true, "\(failures)")
            let file = try VipsImage.open(data: Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/x-8.png")))
            #expect(file.width == 8 && file.height == 5, "by-name's file, 40×24 made 8 wide")
        case .namedByASize:
            #expect(failures.first?.reason.contains("out/x-8.png was already written in this run by output") == true, "\(failures)")
        }
    }

    @Test func aFileEnlargedPastItsDeclaredWidthMayNotTakeAnotherInputsFile() async throws {
        // Given an output resized to 8 px, then doubled by a `vips` step, which declares no size:
        // x.jpg lands on out/x-16.png, the thumbnail of x-16.jpg
        let directory = try TemporaryDirectory()
        for name in ["x.jpg", "x-16.jpg"] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/" + name)
        }
        let doubled = #"[{"resize": {"width": 8}}, {"vips": {"operation": "zoom", "xfac": 2, "yfac": 2}}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("doubled", steps: doubled, format: "png", path: "out/{stem}-{width}.png"),
                output("plain", steps: width(4), format: "png", path: "out/{stem}.png"),
            ])

        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)

        // Then the enlarged file fails naming the thumbnail, whichever is made first: its size is
        // not bounded by the width its steps declare
        let failures = reports.flatMap(\.failures)
        #expect(failures.count == 1 && failures.first?.input == "in/x.jpg" && failures.first?.output == "doubled", "\(failures)")
        #expect(
            failures.first?.reason.contains(#"out/x-16.png is output "plain"'s file of in/x-16.jpg, which it does not write over"#)
                == true, "\(failures)")
        let file = try VipsImage.open(data: Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/x-16.png")))
        #expect(file.width == 4, "plain's thumbnail")
    }

    @Test func aNameWithMoreDigitsThanAnySizeIsPlanned() async throws {
        // Given an input whose name holds 20 digits, and an output named by its height, whose
        // files the other output's may meet: out/x-99999999999999999999.png would be its size
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 20, height: 10)), to: "in/x-99999999999999999999.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                output("tall", steps: #"[{"resize": {"height": 8}}]"#, format: "png", path: "out/{stem}-{height}.png"),
                output("same", steps: "[]", format: "png", path: "out/{stem}.png"),
            ])
        // When it runs, both files are made
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.outputsWritten == 2 && summary.failed == 0)
    }

    /// An art crop's files have its output's own shape (`x-1x1-60` is `{stem}-{width}` for the
    /// stem `x-1x1`): a file narrowed by a `trim` may land on another input's planned file of the
    /// same output, either way round.
    @Test(arguments: [true, false]) func aTrimmedFileMayNotTakeAnotherInputsFileOfTheSameOutput(artIsNarrowed: Bool) async throws {
        // Given x.png, trimmed to 80×60, and x-1x1.png, which no trim narrows, in one set with a
        // square art crop at out/{stem}{art}-{width}.png: x's square crop narrowed to 60 names
        // x-1x1's own 60 px file, or x-1x1's own file narrowed to 80 names x's crop of 80
        let directory = try TemporaryDirectory()
        let (narrowed, other) = artIsNarrowed ? ("x.png", "x-1x1.png") : ("x-1x1.png", "x.png")
        try directory.write(try Fixtures.boxedPNG(), to: "in/" + narrowed)
        try directory.write(try Fixtures.png(try Fixtures.noise(width: 300, height: 200)), to: "in/" + other)
        let (widths, artWidths) = artIsNarrowed ? ("[60]", "[2000]") : ("[2000]", "[80]")
        let set =
            #"{"name": "h", "widths": \#(widths), "encode": {"format": "png"}, "steps": [{"trim": {}}, {"resize": {}}], "#
            + #""art": [{"media": "(max-width: 500px)", "aspectRatio": "1:1", "widths": \#(artWidths)}], "#
            + #""path": "out/{stem}{art}-{width}.png"}"#
        let json = PipelineHarness.json(inputs: ["in/*.png"], outputs: [set])

        // When it runs, twice
        for _ in 0..<2 {
            let (reports, _) = try await PipelineHarness.run(json, in: directory)

            // Then the narrowed file fails naming the other input's, which stays as planned
            let failures = reports.flatMap(\.failures)
            let path = artIsNarrowed ? "out/x-1x1-60.png" : "out/x-1x1-80.png"
            #expect(failures.count == 1 && failures.first?.input == "in/" + narrowed, "\(failures)")
            #expect(
                failures.first?.reason.contains(#"\#(path) is output "h"'s file of in/\#(other), which it does not write over"#)
                    == true, "\(failures)")
            let file = try VipsImage.open(data: Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + path)))
            #expect(artIsNarrowed ? file.height == 40 : file.height == 80, "x-1x1's own 60 px file, or x's square crop")
        }
    }

    /// URLs are shown with their query values hidden, so two that differ only there look alike;
    /// they are still two inputs, and writing one path for both is refused before anything is
    /// fetched (so no manifest or report ever holds two entries under one name), saying why.
    @Test func twoURLsThatDifferOnlyInAHiddenValueStayTwoInputs() throws {
        let directory = try TemporaryDirectory()
        let urls = ["http://127.0.0.1:9/a.jpg?v=1", "http://127.0.0.1:9/a.jpg?v=2"]
        let json = PipelineHarness.json(inputs: urls, outputs: [output("t", steps: width(8), path: "out/{stem}.webp")])
        let error = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory).plan() }
        #expect(error?.problems.count == 1, "\(String(describing: error))")
        #expect(
            error?.problems.first?.message
                == "output \"t\" of http://127.0.0.1:9/a.jpg?v=… and output \"t\" of http://127.0.0.1:9/a.jpg?v=… "
                + "(two inputs that differ only in what URLs show as …) would both write \(directory.path)/out/a.webp",
            "\(String(describing: error))")
    }
}

/// One file named twice (through a linked folder) is one input while its two names ask for
/// the same images; with different points in the focus file they ask for different crops into
/// one path, a clash.
extension OutputClashTests {
    @Test func oneFileUnderTwoNamesWithDifferentCropPointsClashes() throws {
        // Given a photo named as ph/a.png and as link/a.png (link -> ph), cropped by its focus point
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 100, height: 20)), to: "ph/a.png")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link", withDestinationPath: "ph")
        let output =
            #"{"name": "s", "steps": [{"resize": {"width": 20, "height": 20, "position": "focus"}}], "#
            + #""encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        func plan(points: String) throws -> [PipelineFileError.Problem] {
            try directory.write(Data(points.utf8), to: "points.json")
            let json = PipelineHarness.json(
                inputs: ["ph/a.png", "link/a.png"], outputs: [output], extra: #""focusPoints": "points.json""#)
            do {
                _ = try PipelineHarness.pipeline(json, in: directory).plan()
                return []
            } catch let error as PipelineFileError {
                return error.problems
            }
        }
        // When the two names have different points: the plan refuses the one path both would write
        let clash = try plan(points: #"{"ph/a.png": [0, 0.5], "link/a.png": [1, 0.5]}"#)
        #expect(clash.count == 1, "\(clash)")
        #expect(clash.first?.message.contains("out/a.png") == true, "\(clash)")
        #expect(clash.first?.message.contains("link/a.png") == true, "\(clash)")
        #expect(clash.first?.message.contains("(0.0, 0.5) and (1.0, 0.5)") == true, "\(clash)")
        // And with the same point they are one input, made once
        #expect(try plan(points: #"{"ph/a.png": [0, 0.5], "link/a.png": [0, 0.5]}"#).isEmpty)
    }

    @Test func oneFileUnderTwoNamesIsOneInputWhenTheFocusResizeCropsNothing() throws {
        // Given a photo under two names with different points, resized at focus to a width alone
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 100, height: 20)), to: "ph/a.png")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link", withDestinationPath: "ph")
        try directory.write(Data(#"{"ph/a.png": [0, 0.5], "link/a.png": [1, 0.5]}"#.utf8), to: "points.json")
        let output =
            #"{"name": "s", "steps": [{"resize": {"width": 20, "position": "focus"}}], "#
            + #""encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        let json = PipelineHarness.json(
            inputs: ["ph/a.png", "link/a.png"], outputs: [output], extra: #""focusPoints": "points.json""#)
        // When it is planned: the points place nothing, so the two names are one input and no clash
        let plan = try PipelineHarness.pipeline(json, in: directory).plan()
        #expect(plan.items.count == 1)
        #expect(try #require(plan.items.first).listings.map(\.sameAs) == [nil, 0])
    }
}
