import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips
import VipsComposite

@testable import PipelineKit

@Suite("Composite")
struct CompositeTests {

    /// A composite of `overlay` built from `options`, applied to `base`.
    private func composite(_ base: VipsImage, overlay: VipsImage, _ options: [String: any Sendable]) throws -> VipsImage {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(overlay), to: "logo.png")
        var values = options
        values["image"] = "logo.png"
        let step = try Composite(
            options: ProcessorOptions(
                values: values.mapValues { JSONNode(plain: $0) },
                definitions: Composite.options, baseDirectory: directory.url))
        let context = ProcessingContext(
            input: "fixture", output: "test", originalSize: base.size,
            resources: [step.image: .success(overlay)])
        return try step.process(base, context: context)
    }

    @Test func gravityChangesOnlyThatCorner() throws {
        // Given a blue 100×80 image and a red 10×10 logo
        let base = try Fixtures.solid(width: 100, height: 80, colour: Fixtures.blue)
        let logo = try Fixtures.solid(width: 10, height: 10, colour: Fixtures.red)

        // When the logo is placed southeast
        let result = try composite(base, overlay: logo, ["gravity": "southeast"])

        // Then only the bottom-right 10×10 corner is red; the size, bands and other corners are unchanged
        #expect(result.size == base.size && result.bands == 3)
        #expect(try result.pixel(x: 99, y: 79) == [255, 0, 0])
        #expect(try result.pixel(x: 90, y: 70) == [255, 0, 0])
        #expect(try result.pixel(x: 89, y: 79) == [0, 0, 255])
        #expect(try result.pixel(x: 99, y: 69) == [0, 0, 255])
        for (x, y) in [(0, 0), (99, 0), (0, 79), (50, 40)] {
            #expect(try result.pixel(x: x, y: y) == [0, 0, 255], "(\(x), \(y))")
        }
    }

    @Test func aColourOverlayOnAGreyscaleImageKeepsItsColourAndAGreyOneKeepsTheImageGrey() throws {
        // Given a one-band mid-grey image
        let base = try Fixtures.solid(width: 40, height: 40, colour: [128, 128, 128]).converted(to: .blackAndWhite)

        // When a red logo is placed in its centre, or a grey one
        let red = try composite(base, overlay: try Fixtures.solid(width: 10, height: 10, colour: Fixtures.red), [:])
        let grey = try composite(
            base, overlay: try Fixtures.solid(width: 10, height: 10, colour: [0, 0, 0]).converted(to: .blackAndWhite), [:])

        // Then the red logo is red on a colour image, and the grey one leaves it one band
        #expect(red.bands == 3 && red.interpretation == .sRGB)
        #expect(try red.pixel(x: 20, y: 20) == [255, 0, 0])
        #expect(try red.pixel(x: 0, y: 0) == [128, 128, 128])
        #expect(grey.bands == 1)
        #expect(try grey.pixel(x: 20, y: 20) == [0])
    }

    @Test func offsetOpacityAndTransparentPixels() throws {
        // Given a logo whose left half is transparent
        let base = try Fixtures.solid(width: 40, height: 40, colour: [0, 0, 0])
        let logo = try Fixtures.image(width: 10, height: 10, bands: 4) { x, _ in x < 5 ? [255, 255, 255, 0] : [255, 255, 255, 255] }

        // When it is placed at left 3, top 4 at half opacity
        let result = try composite(base, overlay: logo, ["left": 3, "top": 4, "opacity": 0.5])

        // Then the opaque half becomes mid-grey, the transparent half leaves black, and nothing else moves
        #expect(Fixtures.isClose(try result.pixel(x: 3 + 7, y: 4 + 5), [128, 128, 128], tolerance: 2))
        #expect(try result.pixel(x: 3 + 2, y: 4 + 5) == [0, 0, 0])
        #expect(try result.pixel(x: 2 + 7, y: 4 + 5) != [0, 0, 0])
        #expect(try result.pixel(x: 3 + 7, y: 3) == [0, 0, 0])
        #expect(result.bands == 3)
    }

    @Test func widthScalesTheLogoWithTheImageAndTileCoversIt() throws {
        let base = try Fixtures.solid(width: 200, height: 100, colour: Fixtures.blue)
        let logo = try Fixtures.solid(width: 10, height: 10, colour: Fixtures.red)

        // A logo a quarter of the width, northwest: 50×50 red
        let scaled = try composite(base, overlay: logo, ["gravity": "northwest", "width": 0.25])
        #expect(try scaled.pixel(x: 49, y: 49) == [255, 0, 0])
        #expect(try scaled.pixel(x: 52, y: 10) == [0, 0, 255])
        #expect(try scaled.pixel(x: 10, y: 52) == [0, 0, 255])

        // A tiled logo covers every pixel
        let tiled = try composite(base, overlay: logo, ["tile": true])
        for (x, y) in [(0, 0), (199, 99), (105, 55)] { #expect(try tiled.pixel(x: x, y: y) == [255, 0, 0]) }
    }

    @Test func tilesWithSouthGravityAreLaidOutAsSharpLaysThemOut() throws {
        // Given a black 100×80 image and a 30×25 tile whose first column and first row are red
        let base = try Fixtures.solid(width: 100, height: 80, colour: [0, 0, 0])
        let tile = try Fixtures.image(width: 30, height: 25, bands: 3) { x, y in x == 0 || y == 0 ? Fixtures.red : Fixtures.blue }

        // When tiled with gravity south
        let result = try composite(base, overlay: tile, ["tile": true, "gravity": "south"])

        // Then, as sharp defines it: ceil(100 / 30) = 4 tiles across, made odd (5) because south
        // centres horizontally; ceil(80 / 25) = 4 down. Of the 150×100 grid, the window
        // (150 − 100 + 1) / 2 = 25 from the left and 100 − 80 = 20 from the top is kept: tile
        // edges at x = 5, 35, 65, 95 and y = 5, 30, 55, the last row ending on the bottom edge
        // and the middle tile (x 35–64) centred.
        #expect(result.size == base.size)
        let columns = try (0..<100).filter { try result.pixel(x: $0, y: 40) == [255, 0, 0] }
        let rows = try (0..<80).filter { try result.pixel(x: 60, y: $0) == [255, 0, 0] }
        #expect(columns == [5, 35, 65, 95])
        #expect(rows == [5, 30, 55])
    }

    @Test func tilesWithCentreGravityPutOneTileInTheMiddle() throws {
        let base = try Fixtures.solid(width: 100, height: 80, colour: [0, 0, 0])
        let tile = try Fixtures.image(width: 30, height: 25, bands: 3) { x, y in x == 0 || y == 0 ? Fixtures.red : Fixtures.blue }
        let result = try composite(base, overlay: tile, ["tile": true])
        // 5 × 5 tiles (150×125), the window at (25, 23): edges at x = 5, 35, 65, 95 and y = 2, 27, 52, 77.
        #expect(try (0..<100).filter { try result.pixel(x: $0, y: 40) == [255, 0, 0] } == [5, 35, 65, 95])
        #expect(try (0..<80).filter { try result.pixel(x: 60, y: $0) == [255, 0, 0] } == [2, 27, 52, 77])
    }

    @Test func tilesWithAnOffsetShiftTheGridAsSharpDoes() throws {
        let base = try Fixtures.solid(width: 100, height: 80, colour: [0, 0, 0])
        let tile = try Fixtures.image(width: 30, height: 25, bands: 3) { x, y in x == 0 || y == 0 ? Fixtures.red : Fixtures.blue }
        func edges(_ result: VipsImage, row: Int, column: Int) throws -> (columns: [Int], rows: [Int]) {
            (
                try (0..<100).filter { try result.pixel(x: $0, y: row) == [255, 0, 0] },
                try (0..<80).filter { try result.pixel(x: column, y: $0) == [255, 0, 0] }
            )
        }
        // Centre (no gravity): 5 × 5 tiles (150×125); the window at (40, 10), within the grid
        let centred = try edges(try composite(base, overlay: tile, ["tile": true, "left": 40, "top": 10]), row: 30, column: 60)
        #expect(centred.columns == [20, 50, 80])
        #expect(centred.rows == [15, 40, 65])
        // West: 4 tiles across (120), so the window can go no further than 120 − 100 = 20
        let west = try edges(
            try composite(base, overlay: tile, ["tile": true, "left": 40, "top": 10, "gravity": "west"]), row: 30, column: 60)
        #expect(west.columns == [10, 40, 70])
        #expect(west.rows == [15, 40, 65])
    }

    @Test func anOffsetWinsOverAGravityGivenToo() throws {
        // Given a blue image and a red 10×10 logo
        let base = try Fixtures.solid(width: 60, height: 50, colour: Fixtures.blue)
        let logo = try Fixtures.solid(width: 10, height: 10, colour: Fixtures.red)

        // When both an offset and a gravity are given, as sharp accepts them
        let result = try composite(base, overlay: logo, ["gravity": "southeast", "left": 3, "top": 4])

        // Then the logo is at the offset, and the gravity is ignored
        #expect(try result.pixel(x: 3, y: 4) == [255, 0, 0])
        #expect(try result.pixel(x: 12, y: 13) == [255, 0, 0])
        #expect(try result.pixel(x: 13, y: 4) == [0, 0, 255])
        #expect(try result.pixel(x: 59, y: 49) == [0, 0, 255])
    }

    @Test func blendModesFollowLibvips() throws {
        // multiply: grey over grey darkens; screen lightens
        let base = try Fixtures.solid(width: 10, height: 10, colour: [128, 128, 128])
        let logo = try Fixtures.solid(width: 10, height: 10, colour: [128, 128, 128])
        let multiplied = try composite(base, overlay: logo, ["blend": "multiply"])
        let screened = try composite(base, overlay: logo, ["blend": "screen"])
        #expect(Fixtures.isClose(try multiplied.pixel(x: 5, y: 5), [64, 64, 64], tolerance: 3))
        #expect(Fixtures.isClose(try screened.pixel(x: 5, y: 5), [192, 192, 192], tolerance: 3))
    }

    @Test func aModeThatClearsGivesAnOpaqueImageTransparencyAndOneThatCannotKeepsItOpaque() throws {
        // Given an opaque grey 20×20 image and an opaque red 5×5 logo at (2, 2)
        let base = try Fixtures.solid(width: 20, height: 20, colour: [200, 200, 200])
        let logo = try Fixtures.solid(width: 5, height: 5, colour: Fixtures.red)
        let at: [String: any Sendable] = ["left": 2, "top": 2]

        // When it punches a hole (dest-out), or keeps the image only under the logo (dest-atop)
        let punched = try composite(base, overlay: logo, at.merging(["blend": "dest-out"]) { $1 })
        let kept = try composite(base, overlay: logo, at.merging(["blend": "dest-atop"]) { $1 })

        // Then the cleared pixels are transparent, and the others as opaque as before
        #expect(punched.bands == 4 && kept.bands == 4)
        #expect(try punched.pixel(x: 3, y: 3)[3] == 0)
        #expect(try punched.pixel(x: 15, y: 15) == [200, 200, 200, 255])
        #expect(try kept.pixel(x: 3, y: 3) == [200, 200, 200, 255])
        #expect(try kept.pixel(x: 15, y: 15)[3] == 0)

        // And a mode that cannot clear (over, atop) leaves an opaque image three bands
        for blend in ["over", "atop", "multiply"] {
            #expect(try composite(base, overlay: logo, at.merging(["blend": blend]) { $1 }).bands == 3, "\(blend)")
        }
    }

    @Test func aMissingFileOrABadCombinationIsAnOptionError() throws {
        let directory = try TemporaryDirectory()
        func build(_ values: [String: any Sendable]) throws -> Composite {
            try Composite(
                options: ProcessorOptions(
                    values: values.mapValues { JSONNode(plain: $0) },
                    definitions: Composite.options, baseDirectory: directory.url))
        }
        let missing = #expect(throws: OptionError.self) { try build(["image": "nowhere/logo.png"]) }
        #expect(missing?.option == "image" && missing?.message.contains("nowhere/logo.png") == true)
        #expect((#expect(throws: OptionError.self) { try build(["image": "ftp://example.org/logo.png"]) })?.option == "image")
        try directory.write(Data("not an image".utf8), to: "notes.png")
        let unreadable = #expect(throws: OptionError.self) { try build(["image": "notes.png"]) }
        #expect(unreadable?.option == "image", "\(String(describing: unreadable))")
        #expect(
            unreadable?.message.contains("\(directory.path)/notes.png is not an image libvips can read") == true,
            "\(String(describing: unreadable))")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "logo.png")
        #expect((#expect(throws: OptionError.self) { try build(["image": "logo.png", "left": 3]) })?.option == "top")
    }

    @Test func anInvalidOverlayURLIsNamedWithItsCredentialsHidden() throws {
        let options = ProcessorOptions(
            values: ["image": JSONNode(plain: "http://alice:pass5@exa mple.org/logo.png?sig=sig6")],
            definitions: Composite.options, baseDirectory: URL(fileURLWithPath: "/tmp"))
        let error = #expect(throws: OptionError.self) { try Composite(options: options) }
        #expect(error?.option == "image")
        #expect(error?.message == #""http://…@exa mple.org/logo.png?sig=…" is not a valid URL"#, "\(String(describing: error))")
    }

    /// The identifier goes into fingerprints: two signatures of an overlay are two overlays,
    /// though `explain` shows both as `?sig=…`.
    @Test func theIdentifierKeepsTheOverlayURLWhole() throws {
        let signed = try ["one", "two"].map { signature in
            try Composite(image: try #require(URL(string: "https://cdn.example/logo.png?sig=\(signature)"))).identifier
        }
        #expect(signed[0].contains("?sig=one") && signed[1].contains("?sig=two"), "\(signed)")
    }

    @Test func aURLOverlayIsFetchedOnceForTheWholeRunAndAFileOneIsRelativeToThePipeline() async throws {
        // Given five photos, a logo served over HTTP and a frame in a file beside the pipeline
        let logo = try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: Fixtures.red))
        let server = try TestHTTPServer { _, _ in .init(headers: ["Content-Type": "image/png", "ETag": "\"v1\""], body: logo) }
        let directory = try TemporaryDirectory()
        for index in 0..<5 {
            try directory.write(
                try Fixtures.png(try Fixtures.solid(width: 64, height: 48, colour: Fixtures.blue)), to: "in/photo-\(index).png")
        }
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 4, height: 4, colour: [0, 255, 0])), to: "art/frame.png")
        let steps =
            #"[{"composite": {"image": "\#(server.url("/logo.png"))", "gravity": "northeast"}}, {"composite": {"image": "art/frame.png", "gravity": "southwest"}}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "marked", "steps": \#(steps), "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ], extra: #""cache": {"enabled": false}"#)

        // When it runs
        let (_, summary) = try await PipelineHarness.run(json, in: directory)

        // Then every output has the logo top right and the frame bottom left, and the logo was fetched once
        #expect(summary.succeeded == 5 && summary.failed == 0)
        #expect(server.requests(for: "/logo.png").count == 1)
        for index in 0..<5 {
            let output = try VipsImage.open(file: directory.url.appendingPathComponent("out/photo-\(index).png").path)
            #expect(try output.pixel(x: 63, y: 0) == [255, 0, 0])
            #expect(try output.pixel(x: 0, y: 47) == [0, 255, 0])
            #expect(try output.pixel(x: 30, y: 20) == [0, 0, 255])
        }
    }

    @Test func anOverlayThatCannotBeLoadedFailsTheItemsThatUseItOnly() async throws {
        // Given an overlay URL that answers 404, used by one of two outputs
        let server = try TestHTTPServer { _, _ in .init(status: 404) }
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 16, height: 16, colour: Fixtures.blue)), to: "in/a.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "plain", "encode": {"format": "png"}, "path": "out/{stem}-plain.png"}"#,
                #"{"name": "marked", "steps": [{"composite": {"image": "\#(server.url("/gone.png"))"}}], "encode": {"format": "png"}, "path": "out/{stem}-marked.png"}"#,
            ], extra: #""cache": {"enabled": false}, "fetch": {"retries": 0}"#)

        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)

        // Then the plain output is written and the marked one fails, naming the overlay
        let report = try #require(reports.first)
        #expect(report.written.map(\.output) == ["plain"])
        let failure = try #require(report.failures.first)
        #expect(failure.output == "marked")
        #expect(failure.error.reason.contains("gone.png") && failure.error.reason.contains("404"))
    }
}
