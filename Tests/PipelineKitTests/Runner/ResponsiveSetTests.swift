import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Outputs that list `widths` and `formats`: every combination from one decode, never wider
/// than the photo (its own width stands in once), in the manifest by format and width.
@Suite struct ResponsiveSetTests {
    /// A pipeline making `widths` (JSON array text) in AVIF and WebP from `in/*.jpg`, with a manifest.
    func json(
        widths: String = "[320, 640, 1280]", steps: String = "",
        formats: String = #"[{"format": "avif", "quality": 50}, {"format": "webp", "quality": 80}]"#
    ) -> String {
        PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "hero", "widths": \#(widths), \#(steps.isEmpty ? "" : #""steps": \#(steps),"#) "formats": \#(formats), "path": "out/{stem}-{width}.{format}"}"#
            ], extra: #""manifest": {"path": "out/manifest.json", "urlPrefix": "/img/"}"#)
    }

    /// A folder with one JPEG photo `width`×`height` at `in/photo.jpg`.
    func photo(width: Int, height: Int) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height)), to: "in/photo.jpg")
        return directory
    }

    /// The files in `out/` but the manifest, each with its size and the loader that reads it.
    func files(in directory: TemporaryDirectory) throws -> [String: (width: Int, height: Int, loader: String)] {
        let folder = directory.url.appendingPathComponent("out")
        var found: [String: (width: Int, height: Int, loader: String)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name != "manifest.json" {
            let image = try VipsImage.open(file: folder.appendingPathComponent(name).path)
            found[name] = (image.width, image.height, image.loader ?? "?")
        }
        return found
    }

    func run(_ text: String, in directory: TemporaryDirectory) async throws -> RunSummary {
        let result = try await PipelineHarness.run(text, in: directory)
        for report in result.reports { #expect(report.failures.isEmpty, "\(report.failures)") }
        return result.summary
    }

    @Test func aPhotoNarrowerThanEveryWidthGivesOneFileAtItsOwnWidthPerFormat() async throws {
        let directory = try photo(width: 200, height: 150)
        let summary = try await run(json(), in: directory)
        #expect(summary.succeeded == 1 && summary.failed == 0 && summary.outputsWritten == 2)
        let files = try files(in: directory)
        #expect(Set(files.keys) == ["photo-200.avif", "photo-200.webp"])
        #expect(files["photo-200.avif"].map { [$0.width, $0.height] } == [200, 150])
        #expect(files["photo-200.avif"]?.loader.hasPrefix("heifload") == true)
        #expect(files["photo-200.webp"].map { [$0.width, $0.height] } == [200, 150])
        #expect(files["photo-200.webp"]?.loader.hasPrefix("webpload") == true)
    }

    @Test func eachWidthsHeightIsTheImagesProportionNotTheWidestWidthsRounding() async throws {
        // Given a 1600×1067 photo, decoded at 1280×854 for the widest width (853.6 rounded)
        let directory = try photo(width: 1600, height: 1067)
        _ = try await run(json(widths: "[320, 960, 1280]", formats: #"[{"format": "webp"}]"#), in: directory)
        // Then each width's height is rounded from the photo's own: 213.4 and 640.2, not 213.5 and 640.5
        let files = try files(in: directory)
        #expect(files["photo-320.webp"].map { [$0.width, $0.height] } == [320, 213])
        #expect(files["photo-960.webp"].map { [$0.width, $0.height] } == [960, 640])
        #expect(files["photo-1280.webp"].map { [$0.width, $0.height] } == [1280, 854])
        // and a crop within a pixel of the photo's proportions is sized from its own: 213.6
        let cropped = try photo(width: 1600, height: 1067)
        let steps = #"[{"crop": {"left": 0, "top": 0, "width": 400, "height": 267}}, {"resize": {"width": 320}}]"#
        let crop = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "crop", "steps": \#(steps), "encode": {"format": "webp"}, "path": "out/{stem}-320.webp"}"#])
        _ = try await run(crop, in: cropped)
        #expect(try self.files(in: cropped)["photo-320.webp"].map { [$0.width, $0.height] } == [320, 214])
    }

    /// The plan tells a set's 320 px file from another output's 200 px one by their widths; a
    /// photo 200 px wide makes the set's file 200 px too, whose path is then the other's. It
    /// fails naming both, and the other output's file is written, not over.
    @Test func aSetsFileNarrowedOntoAnotherOutputsPathFailsRatherThanWriteOverIt() async throws {
        let directory = try photo(width: 200, height: 150)
        let text = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "hero", "widths": [320], "formats": ["webp"], "path": "out/{stem}-{width}.webp"}"#,
                #"{"name": "thumb", "steps": [{"resize": {"width": 200}}, {"rotate": {"angle": 180}}], "encode": {"format": "webp"}, "path": "out/{stem}-{width}.webp"}"#,
            ])
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.outputsWritten == 1 && reports.first?.written.map(\.output) == ["thumb"])
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.output == "hero" && failure.reason.contains("is output \"thumb\"'s"), "\(failure.reason)")
        // thumb's file, turned: the gradient's dark corner is at the bottom right
        let written = try VipsImage.open(file: directory.path + "/out/photo-200.webp").rendered()
        #expect(try written.pixel(x: 199, y: 149)[0] < written.pixel(x: 0, y: 0)[0])

        // And two sets whose widths both narrow to the photo's: the first to take the path keeps it
        let sets = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "small", "widths": [320], "formats": ["webp"], "path": "sets/{stem}-{width}.webp"}"#,
                #"{"name": "large", "widths": [640], "formats": ["webp"], "path": "sets/{stem}-{width}.webp"}"#,
            ])
        let (setReports, setSummary) = try await PipelineHarness.run(sets, in: directory)
        #expect(setSummary.outputsWritten == 1 && setReports.first?.written.count == 1)
        let setFailure = try #require(setReports.first?.failures.first)
        let other = setFailure.output == "small" ? "large" : "small"
        #expect(setFailure.reason.contains("is output \"\(other)\"'s"), "\(setFailure.reason)")
        #expect(setReports.first?.written.first?.output == other)
    }

    @Test func aWidthNarrowedOntoAnotherInputIsRefusedSayingHow() async throws {
        // Given a 200 px photo, and beside it an input named as its 200 px file would be
        let directory = try photo(width: 200, height: 150)
        let other = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        try directory.write(other, to: "in/photo-200.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/photo.jpg", "in/photo-200.jpg"],
            outputs: [#"{"name": "set", "widths": [100, 400], "formats": ["jpeg"], "path": "in/{stem}-{width}.jpg"}"#])
        // When the set's 400 px width narrows to the photo's own 200
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then that file is refused, saying the narrowed width named the input, not a link
        let failure = try #require(reports.first { $0.input.displayName == "in/photo.jpg" }?.failures.first)
        #expect(failure.reason.contains("is the input in/photo-200.jpg"), "\(failure.reason)")
        #expect(failure.reason.contains("as a width narrowed to the image's own is"), "\(failure.reason)")
        #expect(!failure.reason.contains("symbolic link"))
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("in/photo-200.jpg")) == other)
    }

    @Test func aWidthNarrowedOntoAnotherInputsFileFailsWhicheverIsMadeFirst() async throws {
        // Given a 400 px photo `a.jpg`, and `a-400.jpg`, whose thumbnail's path is what the
        // set's 500 px width of `a.jpg` takes once narrowed to 400
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 250)), to: "in/a.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 300)), to: "in/a-400.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "set", "widths": [200, 500], "formats": ["webp"], "path": "out/{stem}-{width}.webp"}"#,
                #"{"name": "plain", "steps": [{"resize": {"width": 100}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#,
            ], extra: #""manifest": {"path": "out/manifest.json"}"#)
        for _ in 0..<2 {
            // When it runs, and runs again
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            // Then the narrowed width fails naming the other input's file, which stays the thumbnail
            #expect(summary.failed == 1)
            let failure = try #require(reports.first { $0.input.displayName == "in/a.jpg" }?.failures.first)
            #expect(failure.output == "set" && failure.stage == .encode)
            #expect(
                failure.reason.contains(#"is output "plain"'s file of in/a-400.jpg, which it does not write over"#), "\(failure.reason)")
            let thumbnail = try VipsImage.open(file: directory.path + "/out/a-400.webp")
            #expect(thumbnail.width == 100 && thumbnail.height == 75)
            // and the manifest names it once, as the thumbnail
            let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
            let naming = manifest.inputs.flatMap { input in
                input.outputs.flatMap { name, output in
                    output.formats.flatMap(\.files).filter { $0.path == "a-400.webp" }.map { _ in "\(input.source) \(name)" }
                }
            }
            #expect(naming == ["in/a-400.jpg plain"])
        }
    }

    @Test(arguments: [#"["icc"]"#, #"["exif"]"#]) func everyWidthOfAPhotoTurnedUprightIsWrittenUpright(keep: String) async throws {
        // Given a landscape photo tagged to be shown turned a quarter (portrait, 100×160)
        let directory = try TemporaryDirectory()
        let tagged = try Fixtures.gradient(width: 160, height: 100).withOrientation(6)
        try directory.write(try Fixtures.jpeg(tagged), to: "in/photo.jpg")
        let formats = "[" + ["jpeg", "webp", "tiff"].map { #"{"format": "\#($0)", "keep": \#(keep)}"# }.joined(separator: ", ") + "]"

        // When its widths are made, the narrower ones resized from the decode the widest needs
        _ = try await run(json(widths: "[50, 100]", formats: formats), in: directory)

        // Then every file is portrait and says it is to be shown as it is stored
        let folder = directory.path + "/out"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != "manifest.json" }
        #expect(names.count == 6, "\(names)")
        for name in names {
            let image = try VipsImage.open(file: folder + "/" + name)
            #expect(image.height > image.width && image.orientation == 1, "\(name): \(image.size), orientation \(image.orientation)")
        }
    }

    @Test func placeholdersAreMadeFromAFileWideEnoughNotTheSmallest() async throws {
        // Given a 16:10 photo made at 1 px (a 1×1 file), 48 and 64 px, with an LQIP and a ThumbHash
        let directory = try photo(width: 160, height: 100)
        let output =
            #"{"name": "hero", "widths": [1, 48, 64], "formats": ["webp"], "placeholders": ["lqip", "thumbhash"], "path": "out/{stem}-{width}.webp"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output], extra: #""manifest": {"path": "out/manifest.json"}"#)
        _ = try await run(json, in: directory)
        // Then they come from the 48 px file: the LQIP is 16 px wide and as wide as the photo's shape
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        let placeholders = try #require(manifest.inputs.first?.outputs["hero"]?.placeholders)
        let lqip = try #require(placeholders.lqip?.split(separator: ",").last.flatMap { Data(base64Encoded: String($0)) })
        let image = try VipsImage.open(data: lqip)
        #expect(image.width == 16 && image.height == 10, "\(image.size)")
        #expect(placeholders.thumbhash != nil)
    }

    @Test func aPhotoAsWideAsOneWidthGivesThatWidthAndNoneWider() async throws {
        let directory = try photo(width: 640, height: 480)
        let summary = try await run(json(), in: directory)
        #expect(summary.outputsWritten == 4 && summary.failed == 0)
        let files = try files(in: directory)
        #expect(Set(files.keys) == ["photo-320.avif", "photo-320.webp", "photo-640.avif", "photo-640.webp"])
        #expect(files["photo-640.webp"].map { [$0.width, $0.height] } == [640, 480])
        #expect(files["photo-320.avif"].map { [$0.width, $0.height] } == [320, 240])
    }

    @Test func aPhotoBetweenTwoWidthsGivesItsOwnWidthOnceInPlaceOfTheWiderOnes() async throws {
        let directory = try photo(width: 1000, height: 500)
        let summary = try await run(json(widths: "[320, 640, 1280, 2560]"), in: directory)
        #expect(summary.outputsWritten == 6 && summary.failed == 0)
        let files = try files(in: directory)
        #expect(
            Set(files.keys) == [
                "photo-320.avif", "photo-320.webp", "photo-640.avif", "photo-640.webp",
                "photo-1000.avif", "photo-1000.webp",
            ])
        #expect(files["photo-1000.avif"].map { [$0.width, $0.height] } == [1000, 500])
    }

    @Test func aPhotoWiderThanEveryWidthGivesEveryWidthInEveryFormat() async throws {
        let directory = try photo(width: 1600, height: 1200)
        let summary = try await run(json(), in: directory)
        #expect(summary.outputsWritten == 6 && summary.failed == 0)
        let files = try files(in: directory)
        for width in [320, 640, 1280] {
            for format in ["avif", "webp"] {
                let file = files["photo-\(width).\(format)"]
                #expect(file.map { [$0.width, $0.height] } == [width, width * 3 / 4], "photo-\(width).\(format)")
            }
        }
        #expect(files.count == 6)
    }

    @Test func originalIsThePhotosOwnWidthAndNeverRepeated() async throws {
        let wide = try photo(width: 1000, height: 500)
        #expect(try await run(json(widths: #"[320, "original"]"#), in: wide).outputsWritten == 4)
        #expect(Set(try files(in: wide).keys) == ["photo-320.avif", "photo-320.webp", "photo-1000.avif", "photo-1000.webp"])

        // Narrower than 320: "original" is the one file per format; 320 is not made at all
        let narrow = try photo(width: 200, height: 100)
        #expect(try await run(json(widths: #"[320, "original"]"#), in: narrow).outputsWritten == 2)
        #expect(Set(try files(in: narrow).keys) == ["photo-200.avif", "photo-200.webp"])
    }

    @Test func aResizeThatAllowsEnlargementMakesEveryWidth() async throws {
        let directory = try photo(width: 200, height: 100)
        let steps = #"[{"resize": {"withoutEnlargement": false, "kernel": "cubic"}}]"#
        let summary = try await run(json(widths: "[320, 640]", steps: steps, formats: #"[{"format": "webp"}]"#), in: directory)
        #expect(summary.outputsWritten == 2)
        let files = try files(in: directory)
        #expect(files["photo-320.webp"].map { [$0.width, $0.height] } == [320, 160])
        #expect(files["photo-640.webp"].map { [$0.width, $0.height] } == [640, 320])
    }

    @Test func stepsBeforeTheResizeSetTheWidthTheWidthsAreComparedWith() async throws {
        // A 600 wide crop of a 1600 wide photo: 320 is made, 800 is not, 600 stands in for it
        let directory = try photo(width: 1600, height: 1200)
        let steps = #"[{"crop": {"width": 600, "height": 600}}, {"resize": {}}]"#
        let summary = try await run(json(widths: "[320, 800]", steps: steps, formats: #"[{"format": "webp"}]"#), in: directory)
        #expect(summary.outputsWritten == 2)
        let files = try files(in: directory)
        #expect(files["photo-320.webp"].map { [$0.width, $0.height] } == [320, 320])
        #expect(files["photo-600.webp"].map { [$0.width, $0.height] } == [600, 600])
    }

    @Test func theManifestListsEachFormatsFilesByWidthWithTheirTrueSizes() async throws {
        let directory = try photo(width: 1000, height: 500)
        _ = try await run(json(widths: "[1280, 320, 640]"), in: directory)
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        let hero = try #require(manifest.input("in/photo.jpg")?.outputs["hero"])
        #expect(hero.formats.map(\.format) == ["avif", "webp"])
        #expect(hero.formats.map(\.mimeType) == ["image/avif", "image/webp"])
        for format in hero.formats {
            #expect(format.files.map(\.width) == [320, 640, 1000])
            #expect(format.files.map(\.height) == [160, 320, 500])
            let ext = format.format
            #expect(format.srcset == "/img/photo-320.\(ext) 320w, /img/photo-640.\(ext) 640w, /img/photo-1000.\(ext) 1000w")
            for file in format.files {
                let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/out/" + file.path)
                #expect((attributes[.size] as? Int) == file.bytes, "\(file.path)")
                #expect(file.format == ext)
            }
        }
        #expect(hero.fallback?.path == "photo-1000.webp")
    }

    @Test func aReRunWritesNothingFailsNothingAndKeepsTheManifest() async throws {
        let directory = try photo(width: 500, height: 400)
        let first = try await run(json(), in: directory)
        #expect(first.outputsWritten == 4 && first.failed == 0)
        let manifest = try Data(contentsOf: directory.url.appendingPathComponent("out/manifest.json"))
        let stamp = try FileManager.default.attributesOfItem(atPath: directory.path + "/out/photo-500.avif")[.modificationDate] as? Date

        let second = try await run(json(), in: directory)
        #expect(second.succeeded == 1 && second.failed == 0)
        #expect(second.outputsWritten == 0 && second.outputsUpToDate == 4)
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("out/manifest.json")) == manifest)
        #expect(
            try FileManager.default.attributesOfItem(atPath: directory.path + "/out/photo-500.avif")[.modificationDate] as? Date == stamp)
    }

    @Test func decodingShrinksOnLoadForTheWidestWidthNeeded() throws {
        let directory = try photo(width: 2000, height: 1000)
        // 500 is the widest width needed: JPEG shrink-on-load by 4, decoded at exactly 500 wide
        let explanation = try PipelineHarness.pipeline(json(widths: "[250, 500]"), in: directory).explain()
        let sample = try #require(explanation.samples.first)
        #expect(sample.loadShrink == 4)
        #expect(sample.decodeSize == ImageSize(width: 500, height: 250))
        #expect(explanation.text.contains("hero: widths 250, 500, none wider than the image"))
        #expect(explanation.text.contains("formats avif (.avif[Q=50"))

        // With "original" the photo's own width is needed: no shrink
        let full = try PipelineHarness.pipeline(json(widths: #"[250, "original"]"#), in: directory).explain()
        #expect(full.samples.first?.decodeSize == ImageSize(width: 2000, height: 1000))
    }

    @Test func mistakesAreNamedByTheirJSONPath() throws {
        let text = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "a", "widths": [320, 640, 320], "formats": [{"format": "avif"}, {"format": "webp"}], "path": "out/{stem}-a.webp"}"#,
                #"{"name": "b", "widths": [320], "steps": [{"resize": {"width": 100}}], "encode": {"format": "webp"}, "path": "out/{stem}-{width}-b.webp"}"#,
                #"{"name": "c", "widths": [320], "encode": {"format": "webp"}, "formats": [{"format": "webp"}], "path": "out/{stem}-c.webp"}"#,
                #"{"name": "d", "widths": [320], "steps": [{"resize": {}}, {"resize": {"kernel": "cubic"}}], "encode": {"format": "webp"}, "path": "out/{stem}-d.webp"}"#,
                #"{"name": "e", "formats": [{"format": "webp"}, {"format": "webp", "quality": 50}], "path": "out/{stem}-e.{format}"}"#,
                #"{"name": "f", "widths": [0, "widest"], "encode": {"format": "webp"}, "path": "out/{stem}-{width}-f.webp"}"#,
                #"{"name": "g", "widths": [320], "path": "out/{stem}-g.webp"}"#,
            ])
        var messages: [String: String] = [:]
        do {
            _ = try PipelineDefinition(json: text, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
            Issue.record("the file was accepted")
        } catch {
            for problem in error.problems { messages[problem.path, default: ""] += problem.message + "\n" }
        }
        #expect(messages["outputs[0].widths[2]"]?.contains("320 is listed twice") == true)
        #expect(messages["outputs[0].path"]?.contains("lists 2 widths, so its path needs {width}") == true)
        #expect(messages["outputs[0].path"]?.contains("lists 2 formats, so its path needs {format}") == true)
        #expect(messages["outputs[1].steps[0].resize.width"]?.contains("gives its resize step no width") == true)
        #expect(messages["outputs[2].formats"]?.contains("both encode and formats") == true)
        #expect(messages["outputs[3].steps[1].resize"]?.contains("one resize step") == true)
        #expect(messages["outputs[4].formats[1]"]?.contains("webp is listed twice") == true)
        #expect(messages["outputs[5].widths[0]"]?.contains("out of range") == true)
        #expect(messages["outputs[5].widths[1]"]?.contains("expected one of \"original\"") == true)
        #expect(messages["outputs[6]"]?.contains("missing required key \"encode\" (or \"formats\"") == true)
    }

    @Test func theSchemaDescribesWidthsAndFormats() throws {
        let schema = JSONSchemaGenerator.schema(processors: .standard)
        #expect(schema.contains("\"widths\"") && schema.contains("\"formats\""))
        let directory = try TemporaryDirectory()
        let schemaFile = try directory.write(Data(schema.utf8), to: "schema.json")
        let good = try directory.write(Data(json().utf8), to: "good.json")
        let bad = try directory.write(Data(json(widths: #"[320, "widest"]"#).utf8), to: "bad.json")
        let counts = try SchemaValidator.errorCounts(schema: schemaFile, documents: [good, bad])
        #expect(counts.first == 0)
        #expect((counts.last ?? 0) > 0)
    }

    @Test func theReadmeExampleAndTheBundledPipelineAreValid() throws {
        let readme = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "### Widths and formats in one output\n\n```json\n"))
        let end = try #require(readme.range(of: "\n```", range: section.upperBound..<readme.endIndex))
        let output = String(readme[section.upperBound..<end.lowerBound])
        let definition = try PipelineDefinition(
            json: PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]),
            baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        #expect(definition.outputs.count == 8)
        #expect(Set(definition.outputs.map(\.name)) == ["hero"])

        let bundled = try PipelineDefinition(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/responsive.json"),
            processors: .standard)
        #expect(bundled.outputs.map { $0.variant?.width } == [320, 320, 640, 640, 960, 960, 1280, 1280])
        #expect(bundled.outputs.map(\.encoder.format) == [.avif, .webp, .avif, .webp, .avif, .webp, .avif, .webp])
    }

    @Test func theChoiceFollowsEleventyImgAtTheEdges() {
        let widths: [Int?] = [320, 640, 1280]
        #expect(ResponsiveVariant.chosen(widths: widths, imageWidth: 100, enlarges: false) == [0])
        #expect(ResponsiveVariant.chosen(widths: widths, imageWidth: 320, enlarges: false) == [0])
        #expect(ResponsiveVariant.chosen(widths: widths, imageWidth: 321, enlarges: false) == [0, 1])
        #expect(ResponsiveVariant.chosen(widths: widths, imageWidth: 640, enlarges: false) == [0, 1])
        #expect(ResponsiveVariant.chosen(widths: widths, imageWidth: 5000, enlarges: false) == [0, 1, 2])
        #expect(ResponsiveVariant.chosen(widths: [1280, 320, nil], imageWidth: 640, enlarges: false) == [1, 2])
        #expect(ResponsiveVariant.chosen(widths: [320, nil], imageWidth: 320, enlarges: true) == [0])
        #expect(ResponsiveVariant.chosen(widths: [320, nil], imageWidth: 100, enlarges: true) == [0, 1])
    }
}
