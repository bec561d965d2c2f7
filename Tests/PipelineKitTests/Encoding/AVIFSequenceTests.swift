import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Animated AVIF: with `animation` keep, an animated GIF or WebP made into AVIF is an AVIF image
/// sequence written by libavif, every frame with its delay, read back here by libavif's own
/// `avifdec`; a still image stays the one-image AVIF it was.
@Suite struct AVIFSequenceTests {
    /// Runs libavif's `avifdec` with `arguments` and returns what it printed; fails the test when
    /// it exits with an error.
    func avifdec(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/avifdec")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        try #require(process.terminationStatus == 0, "avifdec \(arguments.joined(separator: " ")): \(text)")
        return text
    }

    /// The durations `avifdec --info` gives the frames of `path`, in milliseconds, in order.
    func frameDurations(_ path: String) throws -> [Int] {
        let info = try avifdec(["--info", path])
        // One line a frame: " * Decoded frame [0] [pts 0.00 (0 timescales)] [duration 0.10 (100 timescales)] [40x30]"
        return info.split(separator: "\n").compactMap { line -> Int? in
            guard line.contains("Decoded frame"), let open = line.range(of: "[duration ") else { return nil }
            let rest = line[open.upperBound...]
            guard let paren = rest.firstIndex(of: "("), let space = rest[paren...].firstIndex(of: " ") else { return nil }
            return Int(rest[rest.index(after: paren)..<space])
        }
    }

    /// The ISOBMFF brand the file declares first: "avis" for an image sequence, "avif" for one image.
    func majorBrand(_ file: Data) -> String {
        String(decoding: file.dropFirst(8).prefix(4), as: UTF8.self)
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

    @Test(arguments: ["gif", "webp"])
    func anAnimationBecomesAnAVIFSequenceOfEveryFrameWithItsDelay(input ext: String) async throws {
        // Given five frames of their own colours and delays, made into a resized AVIF
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "a", "steps": [{"resize": {"width": 20}}], "encode": {"format": "avif", "quality": 80}, "path": "out/{stem}.avif"}"#
            ],
            input: try AnimationTests.fiveFrames(ext), name: "anim.\(ext)")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let path = directory.path + "/out/anim.avif"
        // Then the file is an image sequence, its size one frame's
        #expect(majorBrand(try Data(contentsOf: URL(fileURLWithPath: path))) == "avis")
        #expect(try #require(reports.first).written.first?.size == ImageSize(width: 20, height: 15))
        // And libavif decodes five frames, each shown for the input's delay
        #expect(try frameDurations(path) == AnimationTests.delays)
        // And each frame is the input's frame: a later one differs from the first
        for (index, colour) in AnimationTests.colours.enumerated() {
            let png = directory.path + "/frame\(index).png"
            _ = try avifdec(["--index", "\(index)", path, png])
            let frame = try VipsImage.open(file: png)
            #expect(frame.size == ImageSize(width: 20, height: 15))
            let pixel = Array(try frame.rendered().pixel(x: 10, y: 7).prefix(3))
            #expect(Fixtures.isClose(pixel, colour.map(Double.init), tolerance: 30), "frame \(index): \(pixel)")
        }
    }

    @Test func aStillInputStaysTheOneImageAVIFItWas() async throws {
        // Given a still photograph made into AVIF
        let image = try Fixtures.image(width: 64, height: 48, bands: 3) { x, y in
            [UInt8(x * 4), UInt8(y * 5), UInt8(truncatingIfNeeded: x &* 31 &+ y &* 17)]
        }
        let (directory, reports, summary) = try await run(
            [#"{"name": "a", "encode": {"format": "avif", "quality": 60}, "path": "out/{stem}.avif"}"#],
            input: try image.encoded(suffix: ".png"), name: "still.png")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then it is the one image libavif's still encoding gives, byte for byte
        let file = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/still.avif"))
        let settings = EncoderSettings(format: .avif, quality: 60)
        let prepared = try ImageEncoder.prepare(try VipsImage.open(file: directory.path + "/in/still.png"), for: settings)
        let still = try prepared.image.encodedAVIF(AVIFOutput.encoding(settings, width: 64, height: 48), cores: AvailableCores.count)
        #expect(file == still)
        #expect(majorBrand(file) == "avif")
    }

    @Test func anAnimationsBytesAreTheSameOnOneThreadOrOnIdleCores() throws {
        // Given three 480×320 frames of a gradient under faint noise, at aom's speed 8, where its
        // row threads would code a file of their own, encoded in two different seconds of the
        // clock, which libavif writes into a sequence's movie headers
        let width = 480
        let frameHeight = 320
        let frames = try Fixtures.bandByBand(width: width, height: frameHeight * 3, bands: 3) { band, y, row in
            for x in 0..<width { row[x] = UInt8((x + y % frameHeight) * 255 / 900 + (x * 7919 + y * 104_729 + band * 31) % 23) }
        }
        let encoding = AVIFEncoding(codec: .aom, speed: 8, quantizer: 30)
        // When they are encoded as a sequence with four cores, and with one
        let spread = try frames.encodedAVIFSequence(encoding, frameHeight: frameHeight, delays: [100, 100, 100], loop: 0, cores: 4)
        try waitForTheNextSecond(after: time(nil))
        let alone = try frames.encodedAVIFSequence(encoding, frameHeight: frameHeight, delays: [100, 100, 100], loop: 0, cores: 1)
        // Then the files are one file (compared first: Swift Testing would diff the bytes of two that differ)
        let same = spread == alone
        #expect(same, "\(spread.count) bytes on four cores, \(alone.count) on one")
    }

    /// A frame of 10 ms or less shows for a tenth of a second, as browsers show such a GIF or
    /// WebP frame, and as the GIF and WebP outputs of the same input are written.
    @Test func aFrameOfTenMillisecondsOrLessShowsForATenth() throws {
        let frames = try Fixtures.gradient(width: 16, height: 48)
        let encoding = AVIFEncoding(codec: .aom, speed: 9, quantizer: 30)
        let sequence = try frames.encodedAVIFSequence(encoding, frameHeight: 12, delays: [10, 0, 11, 65000], loop: 0)
        let directory = try TemporaryDirectory()
        try directory.write(sequence, to: "short.avif")
        #expect(try frameDurations(directory.path + "/short.avif") == [100, 100, 11, 65000])
    }

    /// Every frame of a sequence is described alike, as libavif requires: the profile the first
    /// frame carries says for all what the colours are (the others said sRGB, and were refused).
    @Test func anAnimationWithAProfileIsWrittenWithItForEveryFrame() throws {
        let frames = try Fixtures.gradient(width: 16, height: 36).convertedToProfile("p3")
        let profile = try #require(frames.iccProfileBytes)
        let sequence = try frames.encodedAVIFSequence(
            AVIFEncoding(codec: .aom, speed: 9, quantizer: 30), frameHeight: 12, delays: [100, 100, 100], loop: 0)
        let directory = try TemporaryDirectory()
        try directory.write(sequence, to: "p3.avif")
        #expect(try frameDurations(directory.path + "/p3.avif") == [100, 100, 100])
        let reader = try AVIFSequenceReader(file: directory.path + "/p3.avif")
        #expect(try reader.header().iccProfileBytes == profile)
    }

    /// Returns once the clock's second is past `second`, in at most a little over a second.
    func waitForTheNextSecond(after second: time_t) throws {
        for _ in 0..<30 where time(nil) <= second {
            Thread.sleep(forTimeInterval: 0.05)
        }
        try #require(time(nil) > second, "the clock did not move past \(second)")
    }

    @Test func firstMakesAStillAVIFOfTheFirstFrame() async throws {
        let (directory, _, summary) = try await run(
            [#"{"name": "a", "encode": {"format": "avif"}, "path": "out/{stem}.avif"}"#],
            input: try AnimationTests.fiveFrames("gif"), name: "anim.gif", decompress: #""animation": "first""#)
        #expect(summary.succeeded == 1)
        let path = directory.path + "/out/anim.avif"
        #expect(majorBrand(try Data(contentsOf: URL(fileURLWithPath: path))) == "avif")
        let image = try VipsImage.open(file: path)
        #expect(image.size == ImageSize(width: 40, height: 30))
        #expect(Fixtures.isClose(Array(try image.rendered().pixel(x: 20, y: 15).prefix(3)), [255, 0, 0], tolerance: 30))
    }

    @Test(arguments: ["avif", "webp"])
    func aQualityTargetOnAnAnimationIsRefusedClearly(format: String) async throws {
        // Given an animated output with an SSIMULACRA 2 target
        let (directory, reports, _) = try await run(
            [#"{"name": "a", "encode": {"format": "\#(format)", "quality": {"ssimulacra2": 70}}, "path": "out/{stem}.\#(format)"}"#],
            input: try AnimationTests.fiveFrames("gif"), name: "anim.gif")
        // Then that output fails in the encode stage saying why and what to do, and nothing is written
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.output == "a")
        #expect(failure.stage == .encode)
        #expect(
            failure.reason.contains("a quality target scores still images, and this \(format) output is an animation of 5 frames"),
            "\(failure.reason)")
        #expect(failure.reason.contains(#""animation": "first""#), "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty, "\(directory.allFiles())")
    }

    // MARK: Animated AVIF inputs

    /// `AnimationTests.fiveFrames` as an AVIF image sequence, lossless, as pipeline writes one.
    static func fiveFrameSequence() throws -> Data {
        let frames = try HostileFixtures.frames(5, width: 40, height: 30) { AnimationTests.colours[$0] }
        return try frames.encodedAVIFSequence(
            AVIFEncoding(codec: .aom, speed: 9, quantizer: 0, lossless: true), frameHeight: 30, delays: AnimationTests.delays, loop: nil)
    }

    @Test func anAVIFSequenceInputKeepsEveryFrameAndItsDelayInAnimatedOutputs() async throws {
        // Given an AVIF image sequence of five frames with delays of their own (libvips reads
        // none: it failed as an unknown format)
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "g", "steps": [{"resize": {"width": 20}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#,
                #"{"name": "w", "encode": {"format": "webp", "lossless": true}, "path": "out/{stem}.webp"}"#,
                #"{"name": "j", "steps": [{"resize": {"width": 20}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#,
            ], input: try Self.fiveFrameSequence(), name: "anim.avif")
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then the GIF and WebP outputs have the five frames, resized alike, with their delays
        // (libavif before 1.0 reads no loop count: played for ever)
        for (name, size) in [("anim.gif", ImageSize(width: 20, height: 15)), ("anim.webp", ImageSize(width: 40, height: 30))] {
            let image = try VipsImage.open(file: directory.path + "/out/" + name, options: "n=-1")
            #expect(image.pageCount == 5 && image.pageHeight == size.height && image.width == size.width, "\(name)")
            #expect(image.frameDelays == AnimationTests.delays, "\(name)")
            let rendered = try image.rendered()
            for (frame, colour) in AnimationTests.colours.enumerated() {
                let pixel = Array(try rendered.pixel(x: size.width / 2, y: frame * size.height + size.height / 2).prefix(3))
                #expect(Fixtures.isClose(pixel, colour.map(Double.init), tolerance: 30), "\(name) frame \(frame): \(pixel)")
            }
        }
        // And a format that cannot animate gets the first frame
        let jpeg = try VipsImage.open(file: directory.path + "/out/anim.jpg")
        #expect(jpeg.size == ImageSize(width: 20, height: 15))
        #expect(Fixtures.isClose(try jpeg.rendered().pixel(x: 10, y: 7), [255, 0, 0], tolerance: 30))
        // And an animated AVIF output of it is a sequence of the five frames again
        let again = try await run(
            [#"{"name": "a", "encode": {"format": "avif"}, "path": "out/{stem}.avif"}"#],
            input: try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/anim.webp")), name: "anim.webp")
        let sequence = try Data(contentsOf: URL(fileURLWithPath: again.0.path + "/out/anim.avif"))
        let (_, reread, rereadSummary) = try await run(
            [#"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#], input: sequence, name: "anim.avif")
        #expect(rereadSummary.succeeded == 1, "\(reread.flatMap(\.failures))")
    }

    @Test func anAVIFSequenceInputIsHeldToMaxFramesMaxPixelsAndAnimationFirst() async throws {
        let sequence = try Self.fiveFrameSequence()
        let gif = #"{"name": "g", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#
        // Given five frames of 40×30: four frames at most are refused from the header
        let frames = try await run([gif], input: sequence, name: "anim.avif", decompress: #""maxFrames": 4"#)
        let tooMany = try #require(frames.1.first?.failures.first)
        #expect(tooMany.stage == .decompress && tooMany.error.kind == .tooManyPixels)
        #expect(tooMany.reason.contains("5 frames, more than decompress.maxFrames (4)"), "\(tooMany.reason)")
        // And 5,000 pixels at most (6,000 in all) are refused, counting every frame
        let pixels = try await run([gif], input: sequence, name: "anim.avif", decompress: #""maxPixels": 5000"#)
        let tooLarge = try #require(pixels.1.first?.failures.first)
        #expect(tooLarge.error.kind == .tooManyPixels)
        #expect(tooLarge.reason.contains("× 5 frames (6000 pixels), more than decompress.maxPixels (5000)"), "\(tooLarge.reason)")
        #expect(pixels.0.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        // And with "first" the first frame alone is decoded, within both limits
        let (directory, _, summary) = try await run(
            [gif], input: sequence, name: "anim.avif", decompress: #""maxFrames": 4, "maxPixels": 5000, "animation": "first""#)
        #expect(summary.succeeded == 1)
        let still = try VipsImage.open(file: directory.path + "/out/anim.gif", options: "n=-1")
        #expect(still.pageCount == 1 && still.size == ImageSize(width: 40, height: 30))
        #expect(Fixtures.isClose(Array(try still.rendered().pixel(x: 20, y: 15).prefix(3)), [255, 0, 0], tolerance: 30))
    }

    @Test func anAVIFSequencesMemoryEstimateCountsEveryFrameOnlyWhenAnOutputAnimates() throws {
        let directory = try TemporaryDirectory()
        let sequence = try Self.fiveFrameSequence()
        let source = EncodedSource.file(path: try directory.write(sequence, to: "anim.avif"), byteCount: Int64(sequence.count))
        func estimate(_ format: String) throws -> Int64 {
            let json = PipelineHarness.json(
                inputs: ["anim.avif"], outputs: [#"{"name": "o", "encode": {"format": "\#(format)"}, "path": "out/{stem}.\#(format)"}"#])
            let definition = try PipelineDefinition(json: json, baseDirectory: directory.url, processors: .standard)
            return try #require(ImageDecoder(settings: definition.decompress, outputs: definition.outputs).memoryNeeds(of: source)).estimate
        }
        // A GIF output holds five frames of 40×30 at 4 bytes a pixel; a PNG, the first alone
        #expect(try estimate("gif") - estimate("png") >= Int64(4 * 40 * 30 * 4))
    }

    @Test func aFetchedAVIFSequenceDecodesToItsFirstFrameForAStillOutput() throws {
        // Given a sequence's bytes in memory, as a remote input's are, and no output that animates
        let decoded = try ImageDecoder(settings: DecoderTests.settings, outputs: []).decode(
            .memory(VipsBytes(try Self.fiveFrameSequence())))
        // Then its first frame is decoded, in sRGB, and the input is known as AVIF
        #expect(decoded.image.size == ImageSize(width: 40, height: 30) && decoded.frameCount == 1)
        #expect(decoded.image.interpretation == .sRGB)
        #expect(Fixtures.isClose(Array(try decoded.image.pixel(x: 20, y: 15).prefix(3)), [255, 0, 0], tolerance: 30))
        let header = try ImageDecoder(settings: DecoderTests.settings, outputs: []).header(
            of: .memory(VipsBytes(try Self.fiveFrameSequence())))
        #expect(header.format == "avif" && header.upright == ImageSize(width: 40, height: 30))
    }
}
