import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Art direction: an output's `art` entries are other crops at widths of their own, in every
/// format, recorded in the manifest and given `<source media>` elements first.
@Suite struct ArtDirectionTests {
    static let art = #"[{"media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [160, 320]}]"#

    func json(art: String = Self.art, path: String = "out/{stem}{art}-{width}.{format}", widths: String = "[320, 640]") -> String {
        PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "hero", "widths": \#(widths), "formats": ["avif", "webp"], "art": \#(art), "placeholders": ["dominantColor"], "path": "\#(path)"}"#
            ], extra: #""manifest": {"path": "out/manifest.json", "urlPrefix": "/img/"}"#)
    }

    func problems(_ json: String) -> String {
        do {
            _ = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/site", isDirectory: true), processors: .standard)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func eachEntryIsCroppedToItsRatioAtItsWidthsInEveryFormatBesideTheOutputsOwnFiles() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 800, height: 500)), to: "in/photo.jpg")
        let result = try await PipelineHarness.run(json(), in: directory)
        #expect(result.summary.failed == 0 && result.summary.outputsWritten == 8)
        var sizes: [String: [Int]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path + "/out") where name != "manifest.json" {
            let image = try VipsImage.open(file: directory.path + "/out/" + name)
            sizes[name] = [image.width, image.height]
        }
        #expect(
            sizes == [
                "photo-320.avif": [320, 200], "photo-320.webp": [320, 200], "photo-640.avif": [640, 400], "photo-640.webp": [640, 400],
                "photo-1x1-160.avif": [160, 160], "photo-1x1-160.webp": [160, 160],
                "photo-1x1-320.avif": [320, 320], "photo-1x1-320.webp": [320, 320],
            ])

        // The manifest keeps the crops apart from the output's own files, with their media.
        let manifest = try JSONDecoder().decode(
            ImageManifest.self, from: Data(contentsOf: directory.url.appendingPathComponent("out/manifest.json")))
        let hero = try #require(manifest.inputs.first?.outputs["hero"])
        #expect(
            hero.formats.map(\.srcset) == [
                "/img/photo-320.avif 320w, /img/photo-640.avif 640w", "/img/photo-320.webp 320w, /img/photo-640.webp 640w",
            ])
        #expect(hero.fallback?.path == "photo-640.webp")
        let art = try #require(hero.art?.first)
        #expect(art.media == "(max-width: 640px)" && art.aspectRatio == "1:1" && hero.art?.count == 1)
        #expect(
            art.formats.map(\.srcset) == [
                "/img/photo-1x1-160.avif 160w, /img/photo-1x1-320.avif 320w", "/img/photo-1x1-160.webp 160w, /img/photo-1x1-320.webp 320w",
            ])

        // And the manifest is valid against its schema
        let schema = try directory.write(Data(ImageManifest.jsonSchema.utf8), to: "manifest.schema.json")
        #expect(try SchemaValidator.errorCounts(schema: schema, documents: [directory.path + "/out/manifest.json"]) == [0])

        // And <picture> gives the crop's sources, each format, before the output's own.
        let html = try #require(PictureMarkup().html(for: hero))
        let lines = html.split(separator: "\n").map(String.init)
        #expect(lines[1].hasPrefix(#"  <source media="(max-width: 640px)" type="image/avif" srcset="/img/photo-1x1-160.avif 160w"#))
        #expect(lines[1].hasSuffix(#" width="320" height="320">"#), "\(lines[1])")
        #expect(lines[2].hasPrefix(#"  <source media="(max-width: 640px)" type="image/webp""#))
        #expect(lines[3].hasPrefix(#"  <source type="image/avif" srcset="/img/photo-320.avif"#))
        #expect(lines[4].hasPrefix(#"  <img src="/img/photo-640.webp""#))
    }

    @Test func aCropLargerThanThePhotoHoldsIsItsLargestWindowOfTheRatioOnce() async throws {
        // Given a photo 240×180: its largest square is 180 wide, less than one width asked for
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 240, height: 180)), to: "in/photo.jpg")
        let result = try await PipelineHarness.run(json(), in: directory)
        #expect(result.summary.failed == 0)
        // Then the narrower width is made, and the largest square stands in once for the wider
        var sizes: [String: [Int]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path + "/out") where name.contains("-1x1-") {
            let image = try VipsImage.open(file: directory.path + "/out/" + name)
            sizes[name] = [image.width, image.height]
        }
        #expect(
            sizes == [
                "photo-1x1-160.avif": [160, 160], "photo-1x1-160.webp": [160, 160],
                "photo-1x1-180.avif": [180, 180], "photo-1x1-180.webp": [180, 180],
            ])
    }

    @Test func aRatioWhoseWidthWouldBeTallerThanAResizeTakesIsTheLargestWindowOfIt() async throws {
        // Given a 1:100 crop 5,000 wide, which would be 500,000 tall, of a photo 300×400
        let art = #"[{"media": "(max-width: 640px)", "aspectRatio": "1:100", "widths": [5000]}]"#
        #expect(problems(json(art: art)) == "")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 400)), to: "in/photo.jpg")
        // When it runs
        let result = try await PipelineHarness.run(json(art: art), in: directory)
        // Then the crop is the photo's largest window of that ratio, as for any width past it
        #expect(result.summary.failed == 0, "\(result.reports.flatMap(\.failures))")
        let crop = try VipsImage.open(file: directory.path + "/out/photo-1x100-4.webp")
        #expect(crop.size == ImageSize(width: 4, height: 400))

        // And a ratio whose window in it is less than a pixel wide is a pixel wide, as tall as the photo
        let thin = #"[{"media": "(max-width: 640px)", "aspectRatio": "1:100000", "widths": [300]}]"#
        let thinResult = try await PipelineHarness.run(json(art: thin), in: directory)
        #expect(thinResult.summary.failed == 0, "\(thinResult.reports.flatMap(\.failures))")
        #expect(try VipsImage.open(file: directory.path + "/out/photo-1x100000-1.webp").size == ImageSize(width: 1, height: 400))

        // And ratios past any integer, either way, are planned and made as the widest and the thinnest windows
        let extreme =
            #"[{"media": "a", "aspectRatio": "1:99999999999999999999", "widths": [300]}, "#
            + #"{"media": "b", "aspectRatio": "99999999999999999999:1", "widths": [200]}]"#
        #expect(problems(json(art: extreme)) == "")
        let extremeResult = try await PipelineHarness.run(json(art: extreme), in: directory)
        #expect(extremeResult.summary.failed == 0, "\(extremeResult.reports.flatMap(\.failures))")
        let thinnest = directory.path + "/out/photo-1x99999999999999999999-1.webp"
        #expect(try VipsImage.open(file: thinnest).size == ImageSize(width: 1, height: 400))
        let widest = directory.path + "/out/photo-99999999999999999999x1-200.webp"
        #expect(try VipsImage.open(file: widest).size == ImageSize(width: 200, height: 1))
    }

    @Test func aWindowAsTallAsThePhotoIsCutFromItUnscaled() async throws {
        // Given a photo 1600×1000, whose widest 9:16 window, 562 px, is as tall as the photo
        // only to within a pixel (562 × 16 ÷ 9 is 999.1)
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 1600, height: 1000)), to: "in/photo.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "hero", "widths": [320], "formats": ["png"], "art": [{"media": "a", "aspectRatio": "9:16", "widths": [800]}], "#
                    + #""path": "out/{stem}{art}-{width}.{format}"}"#
            ])
        // When it runs
        let result = try await PipelineHarness.run(json, in: directory)
        #expect(result.summary.failed == 0, "\(result.reports.flatMap(\.failures))")
        // Then the crop is the photo's whole height, cut rather than scaled by a pixel
        #expect(try VipsImage.open(file: directory.path + "/out/photo-9x16-562.png").size == ImageSize(width: 562, height: 1000))
    }

    @Test func aCropDecodedSmallerIsStillAsWideAsItsWidth() async throws {
        // Given a photo whose 3:2 window at 2,000 px is 1,333⅓ px tall, which a decode shrunk to
        // the crop's height rounds to 1,333, where that window is 1,999½ px wide
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 2560, height: 1600)), to: "in/photo.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "hero", "widths": [320], "formats": ["webp"], "art": [{"media": "a", "aspectRatio": "3:2", "widths": [100, 2000]}], "#
                    + #""path": "out/{stem}{art}-{width}.{format}"}"#
            ])
        // When it runs
        let result = try await PipelineHarness.run(json, in: directory)
        #expect(result.summary.failed == 0, "\(result.reports.flatMap(\.failures))")
        // Then the crop is the width asked for, named so
        #expect(try VipsImage.open(file: directory.path + "/out/photo-3x2-2000.webp").size == ImageSize(width: 2000, height: 1333))
    }

    @Test func mistakesAreErrorsNamingTheirJSONPath() {
        #expect(
            problems(json(path: "out/{stem}-{width}.{format}")).contains(
                "outputs[0].path: the output has art crops, so its path needs {art}"))
        let badRatio = problems(json(art: #"[{"media": "all", "aspectRatio": "square", "widths": [100]}]"#))
        #expect(
            badRatio.contains(
                #"outputs[0].art[0].aspectRatio: expected a ratio W:H of two positive numbers, such as "1:1" or "4:5", got "square""#))
        let twice = problems(
            json(art: #"[{"media": "a", "aspectRatio": "1:1", "widths": [100]}, {"media": "b", "aspectRatio": "1:1", "widths": [200]}]"#))
        #expect(twice.contains("outputs[0].art[1].aspectRatio: art[0] has the same aspect ratio"))
        // 2:2 is 1:1 under another name: the same crop, made twice
        let sameCrop = problems(
            json(art: #"[{"media": "a", "aspectRatio": "1:1", "widths": [100]}, {"media": "b", "aspectRatio": "2:2", "widths": [200]}]"#))
        #expect(sameCrop.contains("outputs[0].art[1].aspectRatio: art[0] is the same crop (1:1 is 2:2): give one entry"), "\(sameCrop)")
        let repeated = problems(json(art: #"[{"media": "a", "aspectRatio": "4:5", "widths": [100, 100]}]"#))
        #expect(repeated.contains("outputs[0].art[0].widths[1]: 100 is listed twice"))
        let missing = problems(json(art: #"[{"aspectRatio": "4:5", "widths": [100]}]"#))
        #expect(missing.contains("outputs[0].art[0]") && missing.contains("media"))
        let noWidths = problems(
            PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [#"{"name": "o", "formats": ["webp"], "art": \#(Self.art), "path": "out/{stem}{art}-{width}.{format}"}"#]))
        #expect(noWidths.contains("outputs[0].art: art needs the output's own widths"))
    }

    /// A browser takes the first source whose media query matches: a narrower max-width listed
    /// after a wider one is never taken, and the file says so.
    @Test func anEntryThatAnEarlierOneShadowsIsAWarning() throws {
        func warnings(_ art: String) throws -> [String] {
            try PipelineDefinition(
                json: json(art: art), baseDirectory: URL(fileURLWithPath: "/site", isDirectory: true), processors: .standard
            )
            .warnings
        }
        let wideFirst = try warnings(
            #"[{"media": "(max-width: 900px)", "aspectRatio": "4:3", "widths": [900]}, {"media": "(max-width: 500px)", "aspectRatio": "1:1", "widths": [500]}]"#
        )
        #expect(
            wideFirst.contains {
                $0.hasPrefix("outputs[0].art[1].media: (max-width: 500px) is never chosen: art[0] ((max-width: 900px)), listed before it")
            }, "\(wideFirst)")
        // Narrower first, min-widths the other way round, and queries of other forms say nothing
        for art in [
            #"[{"media": "(max-width: 500px)", "aspectRatio": "1:1", "widths": [500]}, {"media": "(max-width: 900px)", "aspectRatio": "4:3", "widths": [900]}]"#,
            #"[{"media": "(min-width: 900px)", "aspectRatio": "4:3", "widths": [900]}, {"media": "(min-width: 500px)", "aspectRatio": "1:1", "widths": [500]}]"#,
            #"[{"media": "(orientation: portrait)", "aspectRatio": "4:3", "widths": [900]}, {"media": "(max-width: 500px)", "aspectRatio": "1:1", "widths": [500]}]"#,
        ] {
            #expect(try warnings(art).allSatisfy { !$0.contains("never chosen") }, "\(art)")
        }
        // An entry for every screen leaves the output's own files never chosen
        for media in ["all", "(min-width: 0px)"] {
            let every = try warnings(#"[{"media": "\#(media)", "aspectRatio": "1:1", "widths": [500]}]"#)
            #expect(every.contains { $0.hasPrefix("outputs[0].art[0].media: \(media) matches every screen") }, "\(every)")
        }
    }

    /// A query a browser cannot parse matches no screen, so its crop would be made and never
    /// shown; a blank one matches every screen. Both are refused, naming the entry.
    @Test func aMediaQueryABrowserWouldDropIsRefused() {
        func media(_ query: String) -> String {
            problems(json(art: #"[{"media": "\#(query)", "aspectRatio": "1:1", "widths": [160]}]"#))
        }
        let refused: [(String, String)] = [
            (
                "max-width: 640px",
                #""max-width: 640px" has a feature outside parentheses, so a browser matches it to no screen; write (max-width: 640px)"#
            ),
            ("screen and max-width: 640px", "has a feature outside parentheses"),
            (
                "(max-width: 640)",
                "gives max-width the number 640 with no unit, so a browser matches it to no screen; write (max-width: 640px)"
            ),
            ("screen and", #"ends in "and" with no condition after it"#),
            ("(max-width: 640px) and", #"ends in "and" with no condition after it"#),
            (" ", "is blank, which a browser takes as every screen"),
            ("(max-width: 640px", "has parentheses that do not pair"),
            ("(max-width: 640px),", "has an empty query between its commas"),
        ]
        for (query, said) in refused {
            let text = media(query)
            #expect(text.contains("outputs[0].art[0].media: ") && text.contains(said), "\(query): \(text)")
        }
        // Queries of every form a browser takes pass
        for query in [
            "(max-width: 640px)", "screen and (max-width: 40em)", "(orientation: portrait)", "(min-resolution: 2dppx)",
            "(max-width: 0)", "not all and (monochrome)", "(400px <= width <= 700px)", "print, (max-width: 640px)",
            "only screen and (min-width: 320px) and (max-width: 640px)", "(prefers-color-scheme: dark)",
        ] {
            #expect(media(query).isEmpty, "\(query): \(media(query))")
        }
    }

    /// A crop's width that the image's own stands in for may name another crop's file
    /// (`{art}{width}`: `-1x1` and 110 against `-1x11` and 10): it is refused, and the other
    /// crop's file stays as planned, run after run.
    @Test func aCropWhoseStandInNamesAnotherCropsFileIsRefused() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 110, height: 110)), to: "in/sq.jpg")
        let art =
            #"[{"media": "(max-width: 300px)", "aspectRatio": "1:11", "widths": [10]}, "#
            + #"{"media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [5000]}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "h", "widths": [100], "formats": ["png"], "art": \#(art), "path": "out/{stem}{art}{width}.{format}"}"#])
        for _ in 0..<2 {
            let (reports, _) = try await PipelineHarness.run(json, in: directory)
            let failures = reports.flatMap(\.failures)
            #expect(failures.count == 1 && failures.first?.file == "art 1:1, 5000 px, png", "\(failures)")
            #expect(failures.first?.reason.contains(#"out/sq-1x1110.png is output "h" (art 1:11, png)'s"#) == true, "\(failures)")
            let file = try VipsImage.open(file: directory.path + "/out/sq-1x1110.png")
            #expect(file.width == 10 && file.height == 110)
        }
    }
}
