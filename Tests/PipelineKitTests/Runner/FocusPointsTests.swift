import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `"position": {"x": …, "y": …}` and `"position": "focus"` with the `focusPoints` file: the
/// crop keeps each input's point, the journal knows the points, nothing writes onto the file.
@Suite struct FocusPointsTests {
    /// A 400×200 grey photo with a red square centred at (0.8, 0.4).
    func marked() throws -> Data {
        try Fixtures.png(
            try Fixtures.image(width: 400, height: 200, bands: 3) { x, y in
                abs(x - 320) < 12 && abs(y - 80) < 12 ? [255, 0, 0] : [128, 128, 128]
            })
    }

    func hasMarker(_ path: String) throws -> Bool {
        let image = try VipsImage.open(file: path)
        let bytes = try image.bytes()
        return stride(from: 0, to: bytes.count, by: image.bands).contains { bytes[$0] > 200 && bytes[$0 + 1] < 60 }
    }

    /// A folder with `in/a.png` and `in/b.png` (both marked) and `focus.json` holding `focus`.
    func folder(focus: String) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try marked(), to: "in/a.png")
        try directory.write(try marked(), to: "in/b.png")
        try directory.write(Data(focus.utf8), to: "focus.json")
        return directory
    }

    /// A pipeline cropping `in/*.png` to 100×100 squares, by `step` (a cover resize at `position` when nil).
    func json(position: String = #""focus""#, path: String = "out/{stem}.png", focusPoints: String? = "focus.json", step: String? = nil)
        -> String
    {
        let step = step ?? #"{"resize": {"width": 100, "height": 100, "fit": "cover", "position": \#(position)}}"#
        return PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "square", "steps": [\#(step)], "encode": {"format": "png"}, "path": "\#(path)"}"#
            ], extra: (focusPoints.map { #""focusPoints": "\#($0)", "# } ?? "") + #""incremental": true"#)
    }

    func problems(_ text: String, in directory: TemporaryDirectory) -> String {
        do {
            _ = try PipelineHarness.pipeline(text, in: directory)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func eachInputIsCroppedAboutItsPointOrItsCentre() async throws {
        // Given a focus file with a point for a.png (a relative key) at its marker, and none for b.png
        let directory = try folder(focus: #"{"in/a.png": [0.8, 0.4]}"#)

        // When the pipeline crops each to a square about its focus point
        let (_, summary) = try await PipelineHarness.run(json(), in: directory)

        // Then a's square keeps the marker and b's, about its centre, does not
        #expect(summary.succeeded == 2)
        #expect(try hasMarker(directory.path + "/out/a.png"))
        #expect(try !hasMarker(directory.path + "/out/b.png"))
    }

    @Test func aCropWindowSitsAtEachInputsPointToo() async throws {
        // Given a focus file with a point for a.png at its marker, and none for b.png
        let directory = try folder(focus: #"{"in/a.png": [0.8, 0.4]}"#)

        // When the pipeline cuts a 100×100 window out of each, unscaled, at its focus point
        let crop = #"{"crop": {"width": 100, "height": 100, "gravity": "focus"}}"#
        let (_, summary) = try await PipelineHarness.run(json(step: crop), in: directory)

        // Then a's window is centred on the marker, at (320, 80), and b's, about its centre, misses it
        #expect(summary.succeeded == 2)
        let a = try VipsImage.open(file: directory.path + "/out/a.png")
        #expect(a.size == ImageSize(width: 100, height: 100))
        #expect(try a.pixel(x: 50, y: 50) == [255, 0, 0])
        #expect(try !hasMarker(directory.path + "/out/b.png"))
        // and without a focus file, the window's "focus" is refused at its own path
        let error = problems(json(focusPoints: nil, step: crop), in: directory)
        #expect(error.contains("outputs[0].steps[0].crop.gravity"), "\(error)")
        #expect(error.contains("names none"), "\(error)")
    }

    @Test func aPointInTheFileKeepsTheMarkerAsAFixedPointDoes() async throws {
        let directory = try folder(focus: "{}")
        _ = try await PipelineHarness.run(json(position: #"{"x": 0.8, "y": 0.4}"#, focusPoints: nil), in: directory)
        #expect(try hasMarker(directory.path + "/out/a.png"))
        #expect(try hasMarker(directory.path + "/out/b.png"))
    }

    @Test func changingOnePointRemakesOnlyThatInputsOutputs() async throws {
        // Given a run that made both inputs' squares
        let directory = try folder(focus: #"{"in/a.png": [0.8, 0.4], "in/b.png": [0.1, 0.1]}"#)
        _ = try await PipelineHarness.run(json(), in: directory)
        let again = try await PipelineHarness.run(json(), in: directory)
        #expect(again.summary.outputsWritten == 0 && again.summary.outputsUpToDate == 2)

        // When b's point moves to its marker
        try directory.write(Data(#"{"in/a.png": [0.8, 0.4], "in/b.png": [0.8, 0.4]}"#.utf8), to: "focus.json")
        let moved = try await PipelineHarness.run(json(), in: directory)

        // Then only b's square is made again, and now keeps the marker
        #expect(moved.summary.outputsWritten == 1 && moved.summary.outputsUpToDate == 1)
        let written = moved.reports.flatMap(\.written).filter { !$0.upToDate }.map(\.path)
        #expect(written.count == 1 && written[0].hasSuffix("out/b.png"), "\(written)")
        #expect(try hasMarker(directory.path + "/out/b.png"))
    }

    @Test func keysThatNameNoInputAreNamedInAWarningAsTheFileWritesThem() throws {
        // Given points for a.png, for a name with a typo, and for b.png by its absolute path
        let directory = try folder(focus: "{}")
        try directory.write(
            Data(
                #"{"in/a.png": [0.8, 0.4], "in/aa.png": [0.1, 0.1], "./in/c.png": [0.5, 0.5], "\#(directory.path)/in/b.png": [0, 0]}"#.utf8),
            to: "focus.json")

        // When the run is planned
        let warnings = try PipelineHarness.pipeline(json(), in: directory).plan().warnings

        // Then the two keys no input matches are named once, as written
        #expect(
            warnings.filter { $0.contains("focusPoints") } == [
                "focusPoints \(directory.path)/focus.json: 2 keys name no input, so their points are not used: "
                    + #""./in/c.png", "in/aa.png""#
            ], "\(warnings)")
        // And a file whose every key names an input says nothing
        try directory.write(Data(#"{"in/a.png": [0.8, 0.4]}"#.utf8), to: "focus.json")
        #expect(try PipelineHarness.pipeline(json(), in: directory).plan().warnings.allSatisfy { !$0.contains("focusPoints") })
    }

    @Test func changingAPointRemakesTheArtCropsCutAboutIt() async throws {
        // Given a run that made a's square art crop about a point far from its marker
        let directory = try folder(focus: #"{"in/a.png": [0.1, 0.1]}"#)
        let art = #"[{"media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [100]}]"#
        let text = PipelineHarness.json(
            inputs: ["in/a.png"],
            outputs: [
                #"{"name": "hero", "widths": [200], "formats": ["png"], "art": \#(art), "steps": [{"resize": {"position": "focus"}}], "path": "out/{stem}{art}-{width}.{format}"}"#
            ],
            extra: #""focusPoints": "focus.json""#)
        _ = try await PipelineHarness.run(text, in: directory)
        #expect(try !hasMarker(directory.path + "/out/a-1x1-100.png"))

        // When the point moves to the marker
        try directory.write(Data(#"{"in/a.png": [0.8, 0.4]}"#.utf8), to: "focus.json")
        let moved = try await PipelineHarness.run(text, in: directory)

        // Then the crop is made again about it
        let written = moved.reports.flatMap(\.written).filter { !$0.upToDate }.map(\.path)
        #expect(written.contains { $0.hasSuffix("out/a-1x1-100.png") }, "\(written)")
        #expect(try hasMarker(directory.path + "/out/a-1x1-100.png"))
    }

    @Test func anOutputOntoTheFocusFileIsRefused() throws {
        // Given an output of one input whose path is the focus file
        let directory = try folder(focus: #"{"in/a.png": [0.8, 0.4]}"#)
        let before = try Data(contentsOf: directory.url.appendingPathComponent("focus.json"))
        let text = json(path: "focus.json").replacingOccurrences(of: "in/*.png", with: "in/a.png")
        let pipeline = try PipelineHarness.pipeline(text, in: directory)

        // Then planning refuses it, naming the focus file, and the file is as it was
        #expect {
            _ = try pipeline.plan()
        } throws: { error in
            "\(error)".contains("would overwrite the focus file \(directory.path)/focus.json")
        }
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("focus.json")) == before)
    }

    @Test func focusNeedsAFocusFile() throws {
        let directory = try folder(focus: "{}")
        let error = problems(json(focusPoints: nil), in: directory)
        #expect(error.contains("outputs[0].steps[0].resize.position"), "\(error)")
        #expect(error.contains("names none"), "\(error)")
    }

    @Test func aPointOutsideTheImageIsRefusedAtItsPath() throws {
        let directory = try folder(focus: "{}")
        let error = problems(json(position: #"{"x": 1.2, "y": 0.4}"#, focusPoints: nil), in: directory)
        #expect(error.contains("outputs[0].steps[0].resize.position"), "\(error)")
        let missing = problems(json(position: #"{"x": 0.5}"#, focusPoints: nil), in: directory)
        #expect(missing.contains("outputs[0].steps[0].resize.position"), "\(missing)")
    }

    @Test func aMalformedFocusFileNamesTheFileAndTheKey() throws {
        let cases: [(text: String, expected: String)] = [
            (#"{"in/a.png": [0.8]}"#, #"key "in/a.png" (line 1): expected [x, y]"#),
            (#"{"in/a.png": [0.8, 0.2], "in/b.png": [2, 0.5]}"#, #"key "in/b.png" (line 1): x and y are fractions"#),
            (#"["in/a.png"]"#, "must be an object"),
            (#"{"in/a.png": "#, "is not JSON"),
        ]
        for (text, expected) in cases {
            let directory = try folder(focus: text)
            let error = problems(json(), in: directory)
            #expect(error.contains("focusPoints: the focus file \(directory.path)/focus.json"), "\(error)")
            #expect(error.contains(expected), "\(error)")
        }
        // Every key at fault is named at once
        let several = problems(json(), in: try folder(focus: #"{"in/a.png": [1.5, 0.2], "x": "y", "z": [0.1]}"#))
        for expected in [#"key "in/a.png" (line 1): x and y"#, #"key "x" (line 1): expected [x, y]"#, #"key "z" (line 1): expected"#] {
            #expect(several.contains(expected), "\(several)")
        }
        let directory = try folder(focus: "{}")
        let missing = problems(json(focusPoints: "nowhere.json"), in: directory)
        #expect(missing.contains("the focus file \(directory.path)/nowhere.json cannot be read"), "\(missing)")
        // alongside the file's other problems, however misshapen it is
        let misspelt = #"{"resize": {"width": 100, "height": 100, "fit": "cver"}}"#
        let both = problems(json(focusPoints: "nowhere.json", step: misspelt), in: directory)
        #expect(both.contains("nowhere.json cannot be read") && both.contains("resize.fit"), "\(both)")
    }

    @Test func facesInABuildWithoutDetectionIsRefusedWhenChecked() throws {
        // Given the built-in steps without a face detector, as a build without the Faces trait has them
        let directory = try folder(focus: "{}")
        let registry = ProcessorRegistry(ProcessorRegistry.standard.processors)
        #expect(registry.faceFinder == nil)
        // Then "faces" is refused at its JSON path, saying why
        var error = ""
        do {
            _ = try PipelineHarness.pipeline(json(position: #""faces""#, focusPoints: nil), in: directory, processors: registry)
        } catch let thrown {
            error = "\(thrown)"
        }
        #expect(error.contains("outputs[0].steps[0].resize.position"), "\(error)")
        #expect(error.contains("this build of pipeline has none (it was built without the Faces trait)"), "\(error)")
    }

    @Test func keysAreInputPathsOrURLs() throws {
        // Keys relative to the pipeline's folder, absolute, and URLs all name their inputs
        let directory = try folder(focus: "{}")
        try directory.write(
            Data(
                #"{"./in/../in/a.png": [0.1, 0.2], "\#(directory.path)/in/b.png": [0.3, 0.4], "https://example.com/c.jpg": [0.5, 0.6]}"#
                    .utf8),
            to: "focus.json")
        let points = try FocusPoints(contentsOf: directory.url.appendingPathComponent("focus.json"), baseDirectory: directory.url)
        let a = InputFile(path: directory.path + "/in/a.png", displayName: "in/a.png", subfolder: "")
        let b = InputFile(path: directory.path + "/in/b.png", displayName: "in/b.png", subfolder: "")
        let other = InputFile(path: directory.path + "/in/other.png", displayName: "in/other.png", subfolder: "")
        #expect(points.point(for: a) == FocusPoint(x: 0.1, y: 0.2))
        #expect(points.point(for: b) == FocusPoint(x: 0.3, y: 0.4))
        #expect(points.point(for: InputFile(url: "https://example.com/c.jpg")) == FocusPoint(x: 0.5, y: 0.6))
        #expect(points.point(for: other) == nil)
    }
}
