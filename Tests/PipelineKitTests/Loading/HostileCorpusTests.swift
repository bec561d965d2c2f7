import Foundation
import Testing
import Vips
@testable import PipelineKit
import StandardProcessors
import TestSupport

/// One file of the hostile corpus and what the pipeline must do with it.
struct CorpusCase: Sendable, CustomTestStringConvertible {
    enum Outcome: Sendable {
        /// Decoded and written; the full-size output has this size (first frame or page, upright).
        case processed(width: Int, height: Int)
        /// Refused in `stage` for a reason the pipeline itself states (too many pixels, not an
        /// image, empty): the reason contains `reason`, always.
        case refused(Stage, String)
        /// Failed in `stage` for a reason libvips gives, containing `reason`. libvips' error
        /// buffer is shared by the whole process, and other tests open images at the same time,
        /// so this reason is checked in a `pipeline` child process (`theCorpusFromTheCommandLine…`).
        case failed(Stage, String)

        var isFailure: Bool {
            if case .processed = self { false } else { true }
        }
    }

    let file: String
    let outcome: Outcome
    let make: @Sendable () throws -> Data

    var testDescription: String { file }
}

/// Broken, hostile and unusual files through a real pipeline run: each is either processed or
/// refused with an error naming the input, the stage and the reason; nothing crashes or hangs.
@Suite struct HostileCorpusTests {
    static let cases: [CorpusCase] = [
        // Valid files in every format libvips reads here.
        CorpusCase(file: "valid.jpg", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("jpg") },
        CorpusCase(file: "valid.png", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("png") },
        CorpusCase(file: "valid.webp", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("webp") },
        CorpusCase(file: "valid.gif", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("gif") },
        CorpusCase(file: "valid.tif", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("tif") },
        CorpusCase(file: "valid.avif", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("avif") },
        // The content decides, not the extension.
        CorpusCase(file: "webp-named.jpg", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("webp") },

        // Truncated files: failOn's default ("truncated") refuses them.
        CorpusCase(file: "truncated.jpg", outcome: .failed(.decompress, "Premature end of")) {
            HostileFixtures.truncated(try HostileFixtures.photo("jpg"))
        },
        CorpusCase(file: "truncated.png", outcome: .failed(.decompress, "libpng read error")) {
            HostileFixtures.truncated(try HostileFixtures.photo("png"))
        },
        CorpusCase(file: "truncated.webp", outcome: .failed(.decompress, "unable to parse image")) {
            HostileFixtures.truncated(try HostileFixtures.photo("webp"))
        },
        CorpusCase(file: "truncated.gif", outcome: .failed(.decompress, "Unexpected end of GIF")) {
            HostileFixtures.truncated(try HostileFixtures.photo("gif"))
        },
        // libtiff cannot read the directory of a cut TIFF, so no trusted loader claims it.
        CorpusCase(file: "truncated.tif", outcome: .refused(.decompress, "not an image libvips can read")) {
            HostileFixtures.truncated(try HostileFixtures.photo("tif"))
        },
        CorpusCase(file: "truncated.avif", outcome: .failed(.decompress, "heif: Invalid input")) {
            HostileFixtures.truncated(try HostileFixtures.photo("avif"))
        },

        // Damaged inside.
        CorpusCase(file: "corrupt.png", outcome: .failed(.decompress, "libpng read error")) {
            HostileFixtures.corrupted(try HostileFixtures.photo("png"))
        },
        CorpusCase(file: "bad-lzw.gif", outcome: .failed(.decompress, "no frames in GIF")) {
            try HostileFixtures.gifWithBadLZWCodeSize()
        },

        // Not images at all.
        CorpusCase(file: "empty.jpg", outcome: .refused(.fetch, "the file is empty")) { Data() },
        CorpusCase(file: "text.jpg", outcome: .refused(.decompress, "not an image libvips can read")) {
            Data("<html><body>404 Not Found</body></html>\n".utf8)
        },
        CorpusCase(file: "noise.png", outcome: .refused(.decompress, "not an image libvips can read")) {
            HostileFixtures.randomBytes(4096, seed: 1)
        },
        CorpusCase(file: "signature-then-noise.png", outcome: .failed(.decompress, "PNG unsigned integer out of range")) {
            Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + HostileFixtures.randomBytes(4096, seed: 2)
        },
        CorpusCase(file: "jpeg-marker-only.jpg", outcome: .failed(.decompress, "Premature end of")) { Data([0xFF, 0xD8, 0xFF]) },
        // A format whose libvips loader is marked untrusted is refused, not handed to it.
        CorpusCase(file: "image.ppm", outcome: .refused(.decompress, "not an image libvips can read")) {
            Data("P6\n4 4\n255\n".utf8) + Data(repeating: 200, count: 48)
        },

        // Decompression bombs: the header declares more pixels than maxPixels allows; refused
        // from the header, before any pixel memory is allocated.
        CorpusCase(file: "bomb.png", outcome: .refused(.decompress, "100000×100000 (10000000000 pixels), more than decompress.maxPixels")) {
            try HostileFixtures.pngDeclaring(width: 100_000, height: 100_000)
        },
        CorpusCase(file: "bomb.jpg", outcome: .refused(.decompress, "65000×65000 (4225000000 pixels), more than decompress.maxPixels")) {
            try HostileFixtures.jpegDeclaring(width: 65000, height: 65000)
        },
        CorpusCase(file: "bomb.gif", outcome: .refused(.decompress, "65535×65535 (4294836225 pixels), more than decompress.maxPixels")) {
            try HostileFixtures.gifDeclaring(width: 65535, height: 65535)
        },
        CorpusCase(file: "bomb.tif", outcome: .refused(.decompress, "100000×100000 (10000000000 pixels), more than decompress.maxPixels")) {
            HostileFixtures.tiffDeclaring(width: 100_000, height: 100_000)
        },

        // Thousands of frames or pages: the first is decoded, quickly.
        CorpusCase(file: "frames-2000.gif", outcome: .processed(width: 8, height: 6)) {
            try HostileFixtures.frames(2000, width: 8, height: 6) { [UInt8($0 % 251), UInt8($0 % 7 * 30), 0] }.encoded(suffix: ".gif")
        },
        CorpusCase(file: "pages-2000.tif", outcome: .processed(width: 8, height: 6)) {
            try HostileFixtures.frames(2000, width: 8, height: 6) { [UInt8($0 % 251), 0, 0] }.encoded(suffix: ".tif")
        },
        CorpusCase(file: "frames-500.webp", outcome: .processed(width: 8, height: 6)) {
            try HostileFixtures.frames(500, width: 8, height: 6) { [UInt8($0 % 251), 0, UInt8($0 % 3 * 100)] }.encoded(suffix: ".webp")
        },

        // Unusual but valid.
        CorpusCase(file: "animated.gif", outcome: .processed(width: 40, height: 30)) { try HostileFixtures.animation("gif") },
        CorpusCase(file: "animated.webp", outcome: .processed(width: 40, height: 30)) { try HostileFixtures.animation("webp") },
        CorpusCase(file: "cmyk.jpg", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32).converted(to: .cmyk).encoded(suffix: ".jpg")
        },
        CorpusCase(file: "grey.jpg", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32, bands: 1).encoded(suffix: ".jpg")
        },
        CorpusCase(file: "palette.png", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32).encoded(suffix: ".png[palette,colours=16]")
        },
        CorpusCase(file: "grey-alpha.png", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32, bands: 2).encoded(suffix: ".png")
        },
        CorpusCase(file: "p3.jpg", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32).convertedFromSRGB(toProfile: "p3").encoded(suffix: ".jpg")
        },
        CorpusCase(file: "rotated.webp", outcome: .processed(width: 32, height: 48)) {
            try Fixtures.gradient(width: 48, height: 32).withOrientation(6).encoded(suffix: ".webp")
        },
        CorpusCase(file: "rotated.png", outcome: .processed(width: 32, height: 48)) {
            try HostileFixtures.png(try Fixtures.gradient(width: 48, height: 32), orientation: 8)
        },
        CorpusCase(file: "1x1.png", outcome: .processed(width: 1, height: 1)) {
            try Fixtures.png(try Fixtures.solid(width: 1, height: 1))
        },
        CorpusCase(file: "tall-3x1500.png", outcome: .processed(width: 3, height: 1500)) {
            try Fixtures.png(try Fixtures.solid(width: 3, height: 1500))
        },
    ]

    @Test(arguments: cases)
    func eachFileIsProcessedOrRefusedWithItsStageAndReason(_ corpusCase: CorpusCase) async throws {
        // Given the file among the inputs, and a full-size output and a resized one
        let directory = try TemporaryDirectory()
        try directory.write(try corpusCase.make(), to: "in/\(corpusCase.file)")
        let json = PipelineHarness.json(inputs: ["in/*"], outputs: [
            #"{"name": "full", "encode": {"format": "png"}, "path": "out/{name}.png"}"#,
            #"{"name": "small", "steps": [{"resize": {"width": 8}}], "encode": {"format": "webp"}, "path": "out/{name}-small.webp"}"#,
        ])
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        let report = try #require(reports.first)
        #expect(summary.inputs == 1)
        // Then the outcome is the expected one
        switch corpusCase.outcome {
        case .processed(let width, let height):
            #expect(report.failures.isEmpty, "\(report.failures)")
            #expect(report.written.map(\.output) == ["full", "small"])
            let full = try VipsImage.open(file: directory.path + "/out/\(corpusCase.file).png", options: "fail_on=warning").rendered()
            #expect(full.size == ImageSize(width: width, height: height))
            #expect(full.pageCount == 1)
            let small = try VipsImage.open(file: directory.path + "/out/\(corpusCase.file)-small.webp").rendered()
            #expect(small.width == 8)
        case .refused(let stage, let reason), .failed(let stage, let reason):
            let failure = try #require(report.failures.first)
            #expect(failure.input == "in/\(corpusCase.file)")
            #expect(failure.output == nil, "a failure before fan-out fails the whole input")
            #expect(failure.stage == stage)
            #expect(!failure.reason.isEmpty)
            if case .refused = corpusCase.outcome { #expect(failure.reason.contains(reason), "\(failure.reason)") }
            #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        }
    }

    @Test func theCorpusFromTheCommandLineGivesEachFailureItsInputStageAndReason() throws {
        // Given every corpus file in one folder and a pipeline file for them
        let directory = try TemporaryDirectory()
        for corpusCase in Self.cases { try directory.write(try corpusCase.make(), to: "in/\(corpusCase.file)") }
        let pipeline = PipelineHarness.json(inputs: ["in/*"], outputs: [
            #"{"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#,
        ])
        let file = try directory.write(Data(pipeline.utf8), to: "pipeline.json")
        // When `pipeline run` runs them (its own process: its libvips error buffer is its own)
        let result = try CommandRunner.run(["run", file])
        // Then it exits 1 and prints one line per broken file: input, stage and reason
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        for corpusCase in Self.cases {
            let prefix = "failed: in/\(corpusCase.file): "
            let printed = lines.filter { $0.hasPrefix(prefix) }
            switch corpusCase.outcome {
            case .processed:
                #expect(printed.isEmpty, "\(corpusCase.file): \(printed)")
            case .refused(let stage, let reason), .failed(let stage, let reason):
                #expect(printed.count == 1, "\(corpusCase.file): \(printed)")
                #expect(printed.first?.hasPrefix(prefix + stage.rawValue + ": ") == true, "\(printed)")
                #expect(printed.first?.contains(reason) == true, "\(corpusCase.file): expected \"\(reason)\" in \(printed)")
            }
        }
        let failures = Self.cases.filter(\.outcome.isFailure).count
        #expect(result.standardOutput.contains("\(Self.cases.count) inputs, \(Self.cases.count - failures) succeeded, \(failures) failed"))
    }

    @Test func theWholeCorpusInOneRunFailsOnlyTheBrokenFiles() async throws {
        // Given every corpus file in one folder
        let directory = try TemporaryDirectory()
        for corpusCase in Self.cases { try directory.write(try corpusCase.make(), to: "in/\(corpusCase.file)") }
        let json = PipelineHarness.json(inputs: ["in/*"], outputs: [
            #"{"name": "t", "steps": [{"resize": {"width": 16, "height": 16, "fit": "cover"}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#,
        ])
        // When they run together
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then each good file is written and each broken one fails alone
        let expectedFailures = Set(Self.cases.filter(\.outcome.isFailure).map { "in/" + $0.file })
        #expect(summary.inputs == Self.cases.count)
        #expect(Set(reports.filter { !$0.succeeded }.map(\.input.displayName)) == expectedFailures)
        #expect(summary.outputsWritten == Self.cases.count - expectedFailures.count)
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test(arguments: [
        (DecompressSettings.FailOn.none, true), (.truncated, false), (.error, false), (.warning, false),
    ])
    func failOnDecidesWhetherATruncatedJPEGIsDecoded(failOn: DecompressSettings.FailOn, decodes: Bool) async throws {
        // Given a JPEG cut in half
        let directory = try TemporaryDirectory()
        try directory.write(HostileFixtures.truncated(try HostileFixtures.photo("jpg", width: 256, height: 256)), to: "in/cut.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [
            #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
        ], extra: #""decompress": {"failOn": "\#(failOn.rawValue)"}"#)
        // When it runs with that failOn
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then "none" decodes what is there (the rest grey) and every stricter level refuses it
        #expect(reports[0].succeeded == decodes, "\(reports[0].failures)")
        if !decodes { #expect(reports[0].failures.first?.stage == .decompress) }
    }

    @Test func failOnDefaultsToTruncated() throws {
        let definition = try PipelineDefinition(json: PipelineHarness.json(inputs: ["a.jpg"], outputs: [
            #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#,
        ]), baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        #expect(definition.decompress.failOn == .truncated)
        #expect(definition.decompress.timeout == 60)
    }
}
