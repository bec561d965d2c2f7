import Foundation
import StandardProcessors
import Testing
import Vips

@testable import PipelineKit

/// A manifest's placeholders are kept from the previous one only for the very files they were
/// computed from: a run stopped after remaking some outputs leaves them in the journal, not
/// in the manifest. They come from a file libvips reads: not an animated AVIF.
@Suite struct PlaceholderReuseTests {
    func json(quality: Int) -> String {
        PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 64}}], "encode": {"format": "jpeg", "quality": \#(quality)}, "#
                    + #""path": "out/{stem}.jpg", "placeholders": ["lqip"]}"#
            ], extra: #""manifest": {"path": "out/manifest.json"}, "cache": {"directory": "cache"}"#)
    }

    func lqips(_ directory: TemporaryDirectory) throws -> [String: String] {
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        return Dictionary(uniqueKeysWithValues: manifest.inputs.map { ($0.source, $0.outputs["t"]?.placeholders?.lqip ?? "-") })
    }

    @Test func placeholdersOfFilesARunRemadeWithoutItsManifestAreComputedAgain() async throws {
        // Given eight photos made at quality 95, with a manifest
        let directory = try TemporaryDirectory()
        for index in 0..<8 {
            try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 240 + index, height: 160)), to: "in/p\(index).jpg")
        }
        let (_, first) = try await PipelineHarness.run(json(quality: 95), in: directory)
        #expect(first.succeeded == 8)
        let before = try lqips(directory)
        // When the quality changes and a run is stopped after its first input is done (it
        // remakes and records some outputs, and writes the manifest of what it finished)
        let stopped = try PipelineHarness.pipeline(json(quality: 3), in: directory).run()
        var finished: Set<String> = []
        for await event in stopped {
            if case .itemCompleted(let report) = event, !report.written.isEmpty {
                finished.insert(report.input.displayName)
                if finished.count == 1 { stopped.cancel() }
            }
        }
        #expect(!finished.isEmpty)
        let afterStop = try lqips(directory)
        // And the next run finishes
        let (_, next) = try await PipelineHarness.run(json(quality: 3), in: directory)
        #expect(next.outputsUpToDate >= 1, "the stopped run recorded nothing: the test proves nothing")
        let incremental = try lqips(directory)
        // Then every placeholder is the one a run that makes everything again computes
        let forced = try await PipelineHarness.pipeline(json(quality: 3), in: directory).run(force: true).collect()
        #expect(forced.summary?.outputsWritten == 8)
        let reference = try lqips(directory)
        #expect(reference != before, "the quality change does not change the placeholders: the test proves nothing")
        for (source, lqip) in reference {
            #expect(incremental[source] == lqip, "\(source)")
            // The stopped run's manifest had the new entry of each input it finished, and of
            // the others the old one (or none, for one it left part-made)
            if finished.contains(source) {
                #expect(afterStop[source] == lqip, "\(source)")
            } else {
                #expect(afterStop[source] == nil || afterStop[source] == before[source], "\(source)")
            }
        }
    }

    @Test func placeholdersAskedForDifferentlyAreComputedAgainForFilesThatAreUpToDate() async throws {
        // Given a photo made with an LQIP of the default width in its manifest
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 240, height: 160)), to: "in/p.jpg")
        func json(_ placeholders: String, _ options: String) -> String {
            PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [
                    #"{"name": "t", "widths": [120, 200], "formats": ["webp"], "placeholders": \#(placeholders), "#
                        + #""placeholderOptions": \#(options), "path": "out/{stem}-{width}.{format}"}"#
                ], extra: #""manifest": {"path": "out/manifest.json"}"#)
        }
        func placeholders() throws -> Placeholders? {
            try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json")).inputs.first?.outputs["t"]?.placeholders
        }
        func lqipWidth(_ placeholders: Placeholders?) throws -> Int {
            let uri = try #require(placeholders?.lqip)
            let bytes = try #require(Data(base64Encoded: String(uri.drop { $0 != "," }.dropFirst())))
            return try VipsImage.open(data: bytes).width
        }
        _ = try await PipelineHarness.run(json(#"["lqip"]"#, "{}"), in: directory)
        #expect(try lqipWidth(try placeholders()) == 16)
        // When the output asks for more placeholders and a wider LQIP, then for another kind
        // alone, each without --force, its files unchanged
        let (_, widened) = try await PipelineHarness.run(
            json(#"["lqip", "blurhash", "dominantColor"]"#, #"{"lqipWidth": 48}"#), in: directory)
        #expect(widened.outputsWritten == 0 && widened.outputsUpToDate == 2, "the files were made again: the test proves nothing")
        let afterWidening = try placeholders()
        let (_, swapped) = try await PipelineHarness.run(json(#"["thumbhash"]"#, "{}"), in: directory)
        #expect(swapped.outputsWritten == 0)
        let afterSwap = try placeholders()
        // Then the manifest has what each run asked for, as a run that makes everything computes
        #expect(try lqipWidth(afterWidening) == 48)
        #expect(afterWidening?.blurhash != nil && afterWidening?.dominantColor != nil && afterWidening?.thumbhash == nil)
        #expect(afterSwap?.thumbhash != nil && afterSwap?.lqip == nil && afterSwap?.blurhash == nil && afterSwap?.dominantColor == nil)
        let forced = try await PipelineHarness.pipeline(json(#"["thumbhash"]"#, "{}"), in: directory).run(force: true).collect()
        #expect(forced.summary?.outputsWritten == 2)
        #expect(try placeholders() == afterSwap)
    }

    @Test func placeholdersFromAManifestThatDidNotRecordTransparencyAreMadeAgain() async throws {
        // Given a half-transparent image made with a manifest, which a version that did not
        // record transparency wrote (its `placeholdersFrom` without it, and no `transparent`)
        let directory = try TemporaryDirectory()
        let image = try Fixtures.image(width: 64, height: 48, bands: 4) { x, _ in [200, 90, 40, x < 32 ? 255 : 0] }
        try directory.write(try Fixtures.png(image), to: "in/logo.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [#"{"name": "t", "encode": {"format": "webp"}, "path": "out/{stem}.webp", "placeholders": ["dominantColor"]}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        _ = try await PipelineHarness.run(json, in: directory)
        let path = directory.url.appendingPathComponent("out/manifest.json")
        var manifest = try ImageManifest.read(from: path)
        var entry = try #require(manifest.inputs.first?.outputs["t"])
        #expect(entry.placeholders?.transparent == true)
        let recipe = try #require(entry.placeholdersFrom)
        #expect(recipe.hasSuffix(",transparent"))
        entry.placeholders?.transparent = nil
        entry.placeholdersFrom = String(recipe.dropLast(",transparent".count))
        manifest.inputs[0].outputs["t"] = entry
        try JSONEncoder().encode(manifest).write(to: path)
        // When the next run finds its file up to date
        let (_, next) = try await PipelineHarness.run(json, in: directory)
        #expect(next.outputsUpToDate == 1 && next.outputsWritten == 0)
        // Then the placeholders are made again, and say the image is transparent
        let after = try ImageManifest.read(from: path).inputs.first?.outputs["t"]
        #expect(after?.placeholders?.transparent == true && after?.placeholdersFrom == recipe)
    }

    @Test func aTransparentImageMadeAlsoAsAJPEGIsTransparentWhicheverFormatComesFirst() async throws {
        // Given a half-transparent logo made as a set whose JPEG (flattened) is listed first or last
        let directory = try TemporaryDirectory()
        let image = try Fixtures.image(width: 64, height: 48, bands: 4) { x, _ in [200, 90, 40, x < 32 ? 255 : 0] }
        try directory.write(try Fixtures.png(image), to: "in/logo.png")
        for formats in [#"["jpeg", "webp"]"#, #"["webp", "jpeg"]"#] {
            let json = PipelineHarness.json(
                inputs: ["in/*.png"],
                outputs: [
                    #"{"name": "t", "widths": [48], "formats": \#(formats), "path": "out/{stem}-{width}.{format}", "#
                        + #""placeholders": ["dominantColor"]}"#
                ],
                extra: #""manifest": {"path": "out/manifest.json"}"#)
            // When it is made
            _ = try await PipelineHarness.run(json, in: directory)
            // Then its placeholders say it lets the page through, as the page's WebP does
            let entry = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json")).inputs.first?.outputs["t"]
            #expect(entry?.placeholders?.transparent == true, "\(formats)")
        }
    }

    @Test func placeholdersOfAFileInDisplayP3AreItsColoursInSRGB() async throws {
        // Given an sRGB green written as a JPEG in Display P3, whose values are not sRGB's
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 32, height: 32, colour: [0, 200, 40])), to: "in/green.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "t", "encode": {"format": "jpeg", "iccProfile": "p3"}, "path": "out/{stem}.jpg", "placeholders": ["dominantColor"]}"#
            ],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        _ = try await PipelineHarness.run(json, in: directory)
        // Then its dominant colour is the sRGB green (the middle of its 16-level bins), not the
        // washed-out colour its P3 values read as sRGB would give
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        #expect(manifest.inputs.first?.outputs["t"]?.placeholders?.dominantColor == "#08c828")
    }

    @Test func anAnimationWrittenAsAVIFStillHasItsPlaceholders() async throws {
        // Given an animated GIF and a still photo, written as AVIF and WebP of one width, AVIF
        // first, and as AVIF alone (libvips reads no AVIF sequence)
        let directory = try TemporaryDirectory()
        try directory.write(try HostileFixtures.animation("gif"), to: "in/moving.gif")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/still.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "a", "widths": [40], "formats": ["avif", "webp"], "placeholders": ["lqip", "dominantColor"], "#
                    + #""path": "out/{stem}-{width}.{format}"}"#,
                #"{"name": "b", "widths": [40], "formats": ["avif"], "placeholders": ["blurhash", "dominantColor"], "#
                    + #""path": "out/b/{stem}-{width}.{format}"}"#,
            ], extra: #""manifest": {"path": "out/manifest.json"}"#)
        // When they are made
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 2, "\(reports.flatMap(\.failures))")
        #expect(throws: (any Error).self, "libvips reads AVIF sequences now: the test proves nothing") {
            try VipsImage.open(file: directory.path + "/out/b/moving-40.avif")
        }
        // Then each has its placeholders, the animation's from its first frame, red
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        for input in manifest.inputs {
            #expect(input.outputs["a"]?.placeholders?.lqip?.hasPrefix("data:image/") == true, "\(input.source)")
            #expect(input.outputs["b"]?.placeholders?.blurhash?.isEmpty == false, "\(input.source)")
            for output in ["a", "b"] { #expect(input.outputs[output]?.placeholders?.dominantColor != nil, "\(input.source)") }
        }
        let moving = try #require(manifest.inputs.first { $0.source.hasSuffix("moving.gif") })
        for output in ["a", "b"] {
            #expect(
                moving.outputs[output]?.placeholders?.dominantColor?.lowercased().hasPrefix("#f") == true,
                "\(output): \(String(describing: moving.outputs[output]?.placeholders))")
        }
        // and a report previews the sequence by its first frame, not the frames stacked
        let sequence = directory.path + "/out/b/moving-40.avif"
        let frame = try VipsImage.firstAVIFFrame(file: sequence, maxPixels: 1 << 20)
        let preview = try #require(ReportThumbnail.dataURI(forImageAt: sequence))
        #expect([preview.width, preview.height] == [frame.width, frame.height] && frame.width == 40)
    }

    @Test func anAnimationThatOpensOnAClearFrameHasTheColourOfTheFirstFrameSeen() async throws {
        // Given a WebP animation that opens on a clear frame, then green
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.animationOpeningOnAClearFrame(), to: "in/fade.webp")
        // When it is written as an animation in each format that keeps one
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "a", "formats": ["webp", "gif", "avif"], "placeholders": ["dominantColor"], "path": "out/{stem}.{format}"}"#
            ], extra: #""manifest": {"path": "out/manifest.json"}"#)
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // (WebP's encoder merges the two green frames into one)
        #expect(try VipsImage.open(file: directory.path + "/out/fade.webp").intField("n-pages") == 2)
        // Then its colour is the green seen, whichever file it is taken from, not the clear frame's black
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        #expect(manifest.inputs.first?.outputs["a"]?.placeholders?.dominantColor == "#08c808")
        for format in ["webp", "gif", "avif"] {
            let path = directory.path + "/out/fade.\(format)"
            let file = WrittenOutput(
                output: "a", path: path, size: ImageSize(width: 16, height: 16), byteCount: 1,
                format: EncoderSettings.Format(rawValue: format))
            let image = try ManifestWriter.placeholderSource(file, at: path)
            #expect(try Placeholders.dominantColor(of: image) == "#08c808", "\(format)")
        }
    }

    @Test func anAnimationWhoseLaterFrameLetsThePageThroughIsTransparent() async throws {
        // Given a WebP animation that opens on an opaque red frame, then one whose left half is clear
        let directory = try TemporaryDirectory()
        let red = Array(repeating: [200, 20, 20, 255] as [UInt8], count: 16 * 16).flatMap { $0 }
        let halfClear = (0..<(16 * 16)).flatMap { index -> [UInt8] in index % 16 < 8 ? [200, 20, 20, 0] : [200, 20, 20, 255] }
        let frames = try VipsImage(pixels: red + halfClear, width: 16, height: 32, bands: 4)
            .settingIntField("page-height", to: 16).settingFrameDelays([100, 100])
        try directory.write(try frames.encoded(suffix: ".webp[lossless]"), to: "in/blink.webp")
        // When it is written as an animation in each format that keeps one
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [#"{"name": "a", "formats": ["webp", "gif", "avif"], "placeholders": ["lqip"], "path": "out/{stem}.{format}"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then its placeholders say it lets the page through, as every file of it does
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        #expect(manifest.inputs.first?.outputs["a"]?.placeholders?.transparent == true)
        for format in ["webp", "gif", "avif"] {
            let path = directory.path + "/out/blink.\(format)"
            let file = WrittenOutput(
                output: "a", path: path, size: ImageSize(width: 16, height: 16), byteCount: 1,
                format: EncoderSettings.Format(rawValue: format))
            #expect(try ManifestWriter.anyFrameIsTransparent(file, at: path), "\(format)")
            #expect(try Placeholders.isOpaque(ManifestWriter.placeholderSource(file, at: path)), "\(format): its first frame is opaque")
        }
    }

    @Test func anOutputWhoseFilesCannotBeReadBackHasNoPlaceholdersAndTheRunSaysSo() async throws {
        // Given a photo made with a manifest and its placeholder
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 240, height: 160)), to: "in/p.jpg")
        let (_, first) = try await PipelineHarness.run(json(quality: 90), in: directory)
        #expect(first.succeeded == 1 && first.warnings.isEmpty)
        #expect(try lqips(directory).values.allSatisfy { $0.hasPrefix("data:image/") })
        // When its output is damaged where it lies, keeping its size and time (the journal takes
        // it as up to date), and the manifest is made again
        let output = directory.path + "/out/p.jpg"
        var info = stat()
        #expect(stat(output, &info) == 0)
        let handle = try #require(FileHandle(forWritingAtPath: output))
        try handle.write(contentsOf: Data(repeating: 0, count: Int(info.st_size)))
        try handle.close()
        var times = [info.st_atim, info.st_mtim]
        #expect(utimensat(AT_FDCWD, output, &times, 0) == 0)
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")
        let (_, second) = try await PipelineHarness.run(json(quality: 90), in: directory)
        #expect(second.outputsUpToDate == 1, "the output was made again: the test proves nothing")
        // Then the entry has no placeholder, and the run's warnings say which and why
        #expect(try lqips(directory).values.allSatisfy { $0 == "-" })
        #expect(second.warnings.count == 1)
        let warning = try #require(second.warnings.first)
        #expect(
            warning.hasPrefix(#"the manifest has no placeholders for output "t" of "#)
                && warning.contains("none of its 1 files could be read (\(output): "), "\(warning)")
    }
}
