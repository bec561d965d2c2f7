import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `decompress.animation`: by default ("keep") an animated GIF or WebP stays animated in GIF and
/// WebP outputs, every frame through the output's steps, with its frame delays and loop count;
/// other formats get the first frame, as every output does with "first". `decompress.maxFrames`
/// and `maxPixels` refuse frame bombs from the header.
@Suite struct AnimationTests {
    /// The colour of frame `index` of `fiveFrames`: each frame different.
    static let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [0, 255, 255]]
    /// The delays of `fiveFrames`, in milliseconds: each frame its own (whole centiseconds, as GIF keeps them).
    static let delays = [100, 200, 300, 400, 500]

    /// Five frames of 40×30 in `colours`, with `delays` and played three times, as `ext`.
    static func fiveFrames(_ ext: String) throws -> Data {
        let frames = try HostileFixtures.frames(5, width: 40, height: 30) { colours[$0] }
            .settingFrameDelays(delays).settingIntField("loop", to: 3)
        return try frames.encoded(suffix: ext == "webp" ? ".webp[lossless=true]" : ".gif")
    }

    /// A GIF of `frames` frames of 1×1 pixel, written byte by byte: libvips would take a while to
    /// encode a hundred thousand frames, and the file is the same few bytes a frame.
    static func tinyFrames(_ frames: Int) -> Data {
        var bytes = Array("GIF89a".utf8)
        // A 1×1 screen with a global palette of two colours (black, white).
        bytes += [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF]
        // Looping for ever (the NETSCAPE2.0 application extension).
        bytes += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
        // Each frame: a graphic control extension (a tenth of a second), an image descriptor and
        // one pixel of colour 0 in LZW (minimum code size 2: clear, 0, end of information).
        let frame: [UInt8] = [0x21, 0xF9, 4, 0, 10, 0, 0, 0, 0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0]
        bytes.reserveCapacity(bytes.count + frames * frame.count + 1)
        for _ in 0..<frames { bytes += frame }
        bytes.append(0x3B)
        return Data(bytes)
    }

    func run(_ outputs: [String], input: Data, name: String, decompress: String = "") async throws -> (
        TemporaryDirectory, [ItemReport], RunSummary
    ) {
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/\(name)")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: outputs, extra: decompress.isEmpty ? "" : #""decompress": {\#(decompress)}"#)
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        return (directory, reports, summary)
    }

    /// Checks that `path` is an animation of the five frames at `width`×`height`, with their
    /// colours, delays and loop count.
    func expectFiveFrames(_ path: String, width: Int, height: Int, tolerance: Double = 30) throws {
        let image = try VipsImage.open(file: path, options: "n=-1")
        #expect(image.pageCount == 5, "\(path)")
        #expect(image.pageHeight == height, "\(path)")
        #expect(image.size == ImageSize(width: width, height: height * 5), "\(path)")
        #expect(image.frameDelays == Self.delays, "\(path)")
        #expect(image.intField("loop") == 3, "\(path)")
        let rendered = try image.rendered()
        for (frame, colour) in Self.colours.enumerated() {
            let pixel = Array(try rendered.pixel(x: width / 2, y: frame * height + height / 2).prefix(3))
            #expect(Fixtures.isClose(pixel, colour.map(Double.init), tolerance: tolerance), "\(path) frame \(frame): \(pixel)")
        }
    }

    @Test(arguments: ["gif", "webp"])
    func gifAndWebPOutputsKeepEveryFrameItsDelayAndTheLoopByDefault(input ext: String) async throws {
        // Given an animation of five frames with delays of their own, played three times, and no
        // decompress settings
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "g", "steps": [{"resize": {"width": 20}}], "encode": {"format": "gif"}, "path": "out/{stem}-{width}x{height}.gif"}"#,
                #"{"name": "w", "steps": [{"resize": {"width": 20}}], "encode": {"format": "webp", "lossless": true}, "path": "out/{stem}-small.webp"}"#,
                #"{"name": "full", "encode": {"format": "webp", "lossless": true}, "path": "out/{stem}.webp"}"#,
                #"{"name": "j", "steps": [{"resize": {"width": 20}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#,
            ], input: try Self.fiveFrames(ext), name: "anim.\(ext)")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then the GIF and WebP outputs have the five frames, each resized alike, with the delays and loop
        try expectFiveFrames(directory.path + "/out/anim-20x15.gif", width: 20, height: 15)
        try expectFiveFrames(directory.path + "/out/anim-small.webp", width: 20, height: 15)
        try expectFiveFrames(directory.path + "/out/anim.webp", width: 40, height: 30)
        // And the report gives one frame's size, as {height} did
        let sizes = Dictionary(uniqueKeysWithValues: try #require(reports.first).written.map { ($0.output, $0.size) })
        #expect(sizes["g"] == ImageSize(width: 20, height: 15))
        #expect(sizes["full"] == ImageSize(width: 40, height: 30))
        // And a format that cannot animate gets the first frame
        let jpeg = try VipsImage.open(file: directory.path + "/out/anim.jpg")
        #expect(jpeg.size == ImageSize(width: 20, height: 15))
        #expect(jpeg.pageCount == 1)
        #expect(Fixtures.isClose(try jpeg.rendered().pixel(x: 10, y: 7), [255, 0, 0], tolerance: 30))
    }

    /// A still made beside an animation is one frame whatever its height: at twice the frame's
    /// height it was named, reported and saved (TIFF, HEIC) as two frames of the input's height.
    @Test func aStillBesideAnAnimationIsOneFrameAtItsOwnHeight() async throws {
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
                #"{"name": "j", "steps": [{"resize": {"width": 80, "withoutEnlargement": false}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-{width}x{height}.jpg"}"#,
                #"{"name": "t", "steps": [{"resize": {"width": 80, "withoutEnlargement": false}}], "encode": {"format": "tiff"}, "path": "out/{stem}.tiff"}"#,
            ], input: try Self.fiveFrames("gif"), name: "anim.gif")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let sizes = Dictionary(uniqueKeysWithValues: try #require(reports.first).written.map { ($0.output, $0.size) })
        #expect(sizes["j"] == ImageSize(width: 80, height: 60) && sizes["t"] == ImageSize(width: 80, height: 60), "\(sizes)")
        let jpeg = try VipsImage.open(file: directory.path + "/out/anim-80x60.jpg")
        #expect(jpeg.size == ImageSize(width: 80, height: 60))
        let tiff = try VipsImage.open(file: directory.path + "/out/anim.tiff", options: "n=-1")
        #expect(tiff.pageCount == 1 && tiff.size == ImageSize(width: 80, height: 60), "\(tiff.size)")
    }

    @Test(arguments: ["gif", "webp"])
    func cropAndRotateApplyToEachFrameAlike(input ext: String) async throws {
        // Given the five frames, cropped to a cover box and turned a quarter
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "g", "steps": [{"resize": {"width": 16, "height": 16, "fit": "cover"}}, {"rotate": {"angle": 90}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
                #"{"name": "w", "steps": [{"crop": {"left": 0, "top": 0, "width": 30, "height": 10}}, {"rotate": {"angle": 90}}], "encode": {"format": "webp", "lossless": true}, "path": "out/{stem}.webp"}"#,
            ], input: try Self.fiveFrames(ext), name: "anim.\(ext)")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then every frame has the size one frame would have, and the pages stay apart
        try expectFiveFrames(directory.path + "/out/anim.gif", width: 16, height: 16)
        try expectFiveFrames(directory.path + "/out/anim.webp", width: 10, height: 30)
    }

    /// A smart crop of an animation keeps one window, chosen on its first frame: a square moving
    /// across three frames leaves it, where a window for each frame followed it.
    @Test func aSmartCropKeepsOneWindowForEveryFrame() async throws {
        let frames = try [5, 45, 85].map { start in
            try Fixtures.image(width: 100, height: 50, bands: 3) { x, y in
                (start..<start + 15).contains(x) && (18..<33).contains(y) ? [255, 255, 255] : [0, 0, 0]
            }
        }
        let gif = try VipsImage.joiningPages(frames).encoded(suffix: ".gif")
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "r", "steps": [{"resize": {"width": 50, "height": 50, "position": "attention"}}], "encode": {"format": "gif"}, "path": "out/{stem}-r.gif"}"#,
                #"{"name": "c", "steps": [{"crop": {"width": 50, "height": 50, "gravity": "entropy"}}], "encode": {"format": "gif"}, "path": "out/{stem}-c.gif"}"#,
            ], input: gif, name: "moving.gif")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        for name in ["r", "c"] {
            let image = try VipsImage.open(file: directory.path + "/out/moving-\(name).gif", options: "n=-1")
            #expect(image.pageCount == 3 && image.pageHeight == 50 && image.width == 50, "\(name)")
            let framesShowingTheSquare = try image.pages().filter {
                try (Vips.call("max", ["in": .image($0.extractingBands(0))])["out"]?.number ?? 0) > 128
            }
            .count
            #expect(framesShowingTheSquare < 3, "\(name): \(framesShowingTheSquare)")
        }
    }

    /// A step that sizes each frame by its content: frames of two sizes cannot be one
    /// animation, and the failure says what makes a still instead.
    @Test func framesMadeToDifferentSizesFailSayingWhatToDo() async throws {
        let dark = try Fixtures.image(width: 30, height: 20, bands: 3) { _, _ in [0, 0, 0] }
        let light = try Fixtures.image(width: 30, height: 20, bands: 3) { _, _ in [255, 255, 255] }
        let directory = try TemporaryDirectory()
        try directory.write(try VipsImage.joiningPages([dark, light]).encoded(suffix: ".gif"), to: "in/sizes.gif")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "g", "steps": [{"corner": {}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#]
        )
        let (reports, summary) = try await PipelineHarness.run(json, in: directory, processors: .standard.adding(CornerByContent.self))
        #expect(summary.failed == 1)
        let reason = try #require(reports.flatMap(\.failures).first?.reason)
        #expect(
            reason.contains("frames of different sizes (10×10, 20×20)") && reason.contains(#"decompress.animation "first""#), "\(reason)")
    }

    /// A trim cuts every frame to the box of what any frame shows, with the first frame's edge
    /// colour: a square moving across a white animation still moves.
    @Test func aTrimCutsEveryFrameToOneWindowSoWhatMovesStillMoves() async throws {
        // Given three 60×30 white frames with a 10×10 black square at x = 5, 25 and 45
        let frames = try [5, 25, 45].map { left in
            try Fixtures.image(width: 60, height: 30, bands: 3) { x, y in
                (left..<(left + 10)).contains(x) && (10..<20).contains(y) ? [0, 0, 0] : [255, 255, 255]
            }
        }
        let gif = try VipsImage.joiningPages(frames).encoded(suffix: ".gif")
        let (directory, reports, summary) = try await run(
            [#"{"name": "g", "steps": [{"trim": {}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            input: gif, name: "moving.gif")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then the frames are 50×10, the box of all three squares, and the square is where it was in each
        let image = try VipsImage.open(file: directory.path + "/out/moving.gif", options: "n=-1")
        #expect(image.pageCount == 3 && image.width == 50 && image.pageHeight == 10, "\(image.width)×\(image.pageHeight)")
        let squares = try image.pages().map { frame in
            try (0..<frame.width).filter { x in try frame.pixel(x: x, y: 5)[0] < 128 }.first ?? -1
        }
        #expect(squares == [0, 20, 40])
    }

    @Test func aGIFOutputsLoopOptionReplacesTheInputs() async throws {
        let (directory, _, summary) = try await run(
            [#"{"name": "g", "encode": {"format": "gif", "loop": 0}, "path": "out/{stem}.gif"}"#],
            input: try Self.fiveFrames("webp"), name: "anim.webp")
        #expect(summary.succeeded == 1)
        let gif = try VipsImage.open(file: directory.path + "/out/anim.gif", options: "n=-1")
        #expect(gif.pageCount == 5)
        #expect(gif.intField("loop") == 0)
    }

    /// A GIF played 65,536 times (the most its 16-bit repeat count says) stays finite in WebP,
    /// whose 16-bit count would wrap round to 0, for ever.
    @Test func aGIFsLongestFiniteLoopStaysFiniteInWebP() async throws {
        let frames = try HostileFixtures.frames(2, width: 8, height: 8) { Self.colours[$0] }
            .settingFrameDelays([100, 100]).settingIntField("loop", to: 65_536)
        let (directory, _, summary) = try await run(
            [#"{"name": "w", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            input: try frames.encoded(suffix: ".gif"), name: "long.gif")
        #expect(summary.succeeded == 1)
        let webp = try VipsImage.open(file: directory.path + "/out/long.webp", options: "n=-1")
        #expect(webp.pageCount == 2 && webp.intField("loop") == 65_535)
    }

    @Test(arguments: ["gif", "webp"])
    func firstGivesEveryOutputTheFirstFrame(input ext: String) async throws {
        let (directory, _, summary) = try await run(
            [#"{"name": "g", "steps": [{"resize": {"width": 20}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            input: try Self.fiveFrames(ext), name: "anim.\(ext)", decompress: #""animation": "first""#)
        #expect(summary.succeeded == 1)
        let gif = try VipsImage.open(file: directory.path + "/out/anim.gif", options: "n=-1")
        #expect(gif.pageCount == 1)
        #expect(gif.size == ImageSize(width: 20, height: 15))
        #expect(Fixtures.isClose(Array(try gif.rendered().pixel(x: 10, y: 7).prefix(3)), [255, 0, 0], tolerance: 30))
    }

    @Test func changingAnimationRemakesOnlyTheOutputsThatAnimate() async throws {
        // Given an animation made into a GIF and a PNG with "first"
        let directory = try TemporaryDirectory()
        try directory.write(try Self.fiveFrames("gif"), to: "in/anim.gif")
        let outputs = [
            #"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
            #"{"name": "p", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
        ]
        let first = PipelineHarness.json(inputs: ["in/*"], outputs: outputs, extra: #""decompress": {"animation": "first"}"#)
        _ = try await PipelineHarness.run(first, in: directory)
        #expect(try VipsImage.open(file: directory.path + "/out/anim.gif", options: "n=-1").pageCount == 1)
        // When it runs again keeping animations
        let (reports, _) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: directory)
        // Then the GIF is made again, animated, and the PNG is up to date
        let written = Dictionary(uniqueKeysWithValues: try #require(reports.first).written.map { ($0.output, $0.upToDate) })
        #expect(written == ["g": false, "p": true])
        try expectFiveFrames(directory.path + "/out/anim.gif", width: 40, height: 30)
    }

    // MARK: Memory

    @Test func memoryAdmissionCountsEveryFrameOnlyWhenAnOutputAnimates() throws {
        let directory = try TemporaryDirectory()
        let data = try Self.fiveFrames("gif")
        let path = try directory.write(data, to: "anim.gif")
        let source = EncodedSource.file(path: path, byteCount: Int64(data.count))
        func estimate(_ format: String, animation: String = "keep") throws -> Int64 {
            let json = PipelineHarness.json(
                inputs: ["anim.gif"], outputs: [#"{"name": "o", "encode": {"format": "\#(format)"}, "path": "out/{stem}.\#(format)"}"#],
                extra: #""decompress": {"animation": "\#(animation)"}"#)
            let definition = try PipelineDefinition(json: json, baseDirectory: directory.url, processors: .standard)
            return try #require(ImageDecoder(settings: definition.decompress, outputs: definition.outputs).memoryNeeds(of: source)).estimate
        }
        // A 40×30 frame at 4 bytes a pixel: a still output without steps is the decoded frame itself
        let stillBytes = Int64(40 * 30 * 4)
        let png = try estimate("png")
        // A GIF output holds every frame: five frames, kept at their size in one pass (no run read
        // apart, and no copy for an output without steps), and its encoder works on all five
        let gif = try estimate("gif")
        #expect(gif == png - stillBytes + 5 * stillBytes + 60_000_000 + 5 * 40 * 30 * 5)
        // With "first", a GIF output is made from one frame
        #expect(try estimate("gif", animation: "first") == png + 60_000_000 + 5 * 40 * 30)
        // An AVIF sequence holds every frame, but its encoder is given one at a time; the GIF's
        // transparency is an alpha band, which AV1 encodes apart
        #expect(try estimate("avif") == png - stillBytes + 5 * stillBytes + 52_000_000 + 560 * 40 * 30)
    }

    @Test func explainSaysWhatBecomesOfAnAnimation() throws {
        // Given an animation of five frames and one over the limit
        let directory = try TemporaryDirectory()
        try directory.write(try Self.fiveFrames("gif"), to: "in/a.gif")
        try directory.write(Self.tinyFrames(2000), to: "in/b.gif")
        let outputs = [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#]
        let text = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/*"], outputs: outputs), in: directory).explain().text
        // Then explain says which frames are decoded, and which input will be refused
        #expect(
            text.contains(" 40×30, animated, 5 frames: decoded at 40×30 each, every frame for the gif, webp and avif outputs"), "\(text)")
        #expect(text.contains(" 1×1, animated, 2000 frames: refused, more than decompress.maxFrames (1000)"), "\(text)")
        // And an animation no output animates is decoded as its first frame
        let still = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["in/a.gif"], outputs: [#"{"name": "p", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#]),
            in: directory
        ).explain().text
        #expect(still.contains(" 40×30, decoded at 40×30\n"), "\(still)")
        // And an output that animates it and searches for a quality is named as failing for it
        let searched = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["in/a.gif"],
                outputs: [#"{"name": "w", "encode": {"format": "webp", "quality": {"ssimulacra2": 80}}, "path": "out/{stem}.webp"}"#]),
            in: directory
        ).explain().text
        #expect(
            searched.contains(#"avif outputs, the first for others; fails for "w": a quality target scores still images"#), "\(searched)")
        #expect(!text.contains("fails for"), "\(text)")
        // And its memory estimate is the decoder's, every frame counted
        let plan = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["in/a.gif"], outputs: outputs), in: directory).explain()
        let definition = try PipelineDefinition(
            json: PipelineHarness.json(inputs: ["in/a.gif"], outputs: outputs), baseDirectory: directory.url, processors: .standard)
        let path = directory.path + "/in/a.gif"
        let needs = try #require(
            ImageDecoder(settings: definition.decompress, outputs: definition.outputs).memoryNeeds(
                of: .file(path: path, byteCount: Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count))))
        #expect(plan.largestInputEstimate == needs.estimate)
    }

    @Test func outputsOfOneTemplateWithDifferentFrameHeightsAreToldApart() throws {
        // {height} is one frame's height, which a cover box fixes for animations as for still images
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "a", "steps": [{"resize": {"width": 20, "height": 10, "fit": "cover"}}], "encode": {"format": "webp"}, "path": "out/{width}x{height}.webp"}"#,
                #"{"name": "b", "steps": [{"resize": {"width": 20, "height": 20, "fit": "cover"}}], "encode": {"format": "webp"}, "path": "out/{width}x{height}.webp"}"#,
            ])
        #expect(throws: Never.self) {
            try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        }
    }
}

/// Crops each frame to its top-left corner, 10 pixels square where its first pixel is dark and
/// 20 elsewhere: a step that sizes each frame by its content.
private struct CornerByContent: ImageProcessing {
    static let name = "corner"
    static let summary = "test: a corner sized by the first pixel"
    static let options: [Option] = []

    init(options: ProcessorOptions) throws(OptionError) {}
    var identifier: String { "corner" }
    func outputSize(for size: ImageSize) -> ImageSize { size }

    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let side = try image.pixel(x: 0, y: 0)[0] < 128 ? 10 : 20
        return try image.extracted(left: 0, top: 0, width: side, height: side)
    }
}
