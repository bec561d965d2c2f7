import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// HEIC, AVIF, JPEG XL, GIF, TIFF and JPEG 2000 inputs, encoded by libvips in the test and run
/// through the pipeline under its hostile-input limits; SVG and PDF read only when the file
/// opts in with `decompress.allowUntrusted`.
@Suite struct InputFormatTests {
    /// Each format: its file extension, libvips' saver suffix, and the loader that reads it.
    static let formats: [(String, String, String)] = [
        ("heic", ".heic[Q=90,compression=hevc,effort=0]", "heifload"),
        ("avif", ".avif[Q=90,effort=0]", "heifload"),
        ("jxl", ".jxl[Q=95,effort=3]", "jxlload"),
        ("gif", ".gif", "gifload"),
        ("tif", ".tif", "tiffload"),
        ("jp2", ".jp2[Q=95]", "jp2kload"),
    ]

    static let outputs = [
        #"{"name": "full", "encode": {"format": "png"}, "path": "out/{name}.png"}"#,
        #"{"name": "small", "steps": [{"resize": {"width": 48}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#,
    ]

    @Test(arguments: formats)
    func eachFormatIsReadAndProcessed(ext: String, suffix: String, loader: String) async throws {
        // Given a 96×64 gradient that libvips encoded as the format
        let source = try Fixtures.gradient(width: 96, height: 64)
        let data = try source.encoded(suffix: suffix)
        #expect(try VipsImage.open(data: data).loader?.hasPrefix(loader) == true)
        let directory = try TemporaryDirectory()
        try directory.write(data, to: "in/photo.\(ext)")
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: Self.outputs), in: directory)
        // Then both outputs are written, of the right size and the same picture
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let full = try VipsImage.open(file: directory.path + "/out/photo.\(ext).png").rendered()
        #expect(full.size == ImageSize(width: 96, height: 64))
        // GIF's palette and lossy coding move a pixel a little, never across the gradient.
        let expected = try source.rendered().pixel(x: 60, y: 40)
        let pixel = try full.pixel(x: 60, y: 40)
        #expect(Fixtures.isClose(Array(pixel.prefix(3)), Array(expected.prefix(3)), tolerance: 24), "\(pixel) vs \(expected)")
        let small = try VipsImage.open(file: directory.path + "/out/photo-small.webp")
        #expect(small.size == ImageSize(width: 48, height: 32))
    }

    @Test(arguments: formats)
    func eachFormatIsHeldToMaxPixelsFromItsHeader(ext: String, suffix: String, loader: String) async throws {
        // Given the same image and a limit below its 6,144 pixels
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.gradient(width: 96, height: 64).encoded(suffix: suffix), to: "in/photo.\(ext)")
        let json = PipelineHarness.json(inputs: ["in/*"], outputs: Self.outputs, extra: #""decompress": {"maxPixels": 6000}"#)
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then it is refused at decompress, naming the limit, and nothing is written
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.input == "in/photo.\(ext)")
        #expect(failure.stage == .decompress)
        #expect(failure.reason.contains("96×64 (6144 pixels), more than decompress.maxPixels (6000)"), "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }

    // MARK: SVG and PDF

    /// A 40×20 SVG filled red.
    static let svg = Data(
        #"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/></svg>"#.utf8)

    /// A one-page PDF of 60×30 points filled blue, with a correct cross-reference table.
    static var pdf: Data {
        let content = "0 0 1 rg 0 0 60 30 re f\n"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 60 30] /Contents 4 0 R >>",
            "<< /Length \(content.utf8.count) >>\nstream\n\(content)endstream",
        ]
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let table = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { text += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n" }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(table)\n%%EOF\n"
        return Data(text.utf8)
    }

    func runUntrusted(allow: String?) async throws -> (TemporaryDirectory, [ItemReport]) {
        let directory = try TemporaryDirectory()
        try directory.write(Self.svg, to: "in/drawing.svg")
        try directory.write(Self.pdf, to: "in/page.pdf")
        let extra = allow.map { #""decompress": {"allowUntrusted": \#($0)}"# } ?? ""
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{name}.png"}"#], extra: extra)
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        return (directory, reports)
    }

    @Test func svgAndPDFAreRefusedWithTheHintUnlessTheFileAllowsThem() async throws {
        // Given an SVG and a PDF, and a file that allows neither
        let (directory, reports) = try await runUntrusted(allow: nil)
        // Then each is refused at decompress, naming the format and the setting, with no output
        for (input, format) in [("in/drawing.svg", "svg"), ("in/page.pdf", "pdf")] {
            let failure = try #require(reports.first { $0.input.displayName == input }?.failures.first)
            #expect(failure.stage == .decompress)
            #expect(failure.reason.contains("\(format.uppercased()) file"), "\(failure.reason)")
            #expect(failure.reason.contains("add \"\(format)\" to decompress.allowUntrusted"), "\(failure.reason)")
        }
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }

    @Test func allowingSVGReadsSVGButStillRefusesPDF() async throws {
        let (directory, reports) = try await runUntrusted(allow: #"["svg"]"#)
        let svg = try #require(reports.first { $0.input.displayName == "in/drawing.svg" })
        #expect(svg.succeeded, "\(svg.failures)")
        let drawn = try VipsImage.open(file: directory.path + "/out/drawing.svg.png").rendered()
        #expect(drawn.size == ImageSize(width: 40, height: 20))
        let red = try drawn.pixel(x: 20, y: 10)
        #expect(Fixtures.isClose(Array(red.prefix(3)), [255, 0, 0], tolerance: 2), "\(red)")
        let pdf = try #require(reports.first { $0.input.displayName == "in/page.pdf" }?.failures.first)
        #expect(pdf.reason.contains("decompress.allowUntrusted"), "\(pdf.reason)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/page.pdf.png"))
    }

    @Test func allowingBothReadsBoth() async throws {
        let (directory, reports) = try await runUntrusted(allow: #"["svg", "pdf"]"#)
        #expect(reports.allSatisfy { $0.succeeded }, "\(reports.flatMap(\.failures))")
        let page = try VipsImage.open(file: directory.path + "/out/page.pdf.png").rendered()
        #expect(page.size == ImageSize(width: 60, height: 30))
        let blue = try page.pixel(x: 30, y: 15)
        #expect(Fixtures.isClose(Array(blue.prefix(3)), [0, 0, 255], tolerance: 2), "\(blue)")
    }

    @Test func aLargeDrawingIsDrawnAtTheSizeItsOutputNeeds() async throws {
        // Given an SVG declared 16000×8000 (red on the left, blue on the right) and the PDF,
        // each resized to a small width
        let directory = try TemporaryDirectory()
        let drawing = #"""
            <svg xmlns="http://www.w3.org/2000/svg" width="16000" height="8000">\#
            <rect width="8000" height="8000" fill="red"/><rect x="8000" width="8000" height="8000" fill="blue"/></svg>
            """#
        try directory.write(Data(drawing.utf8), to: "in/large.svg")
        try directory.write(Self.pdf, to: "in/page.pdf")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [#"{"name": "o", "steps": [{"resize": {"width": 40}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""decompress": {"allowUntrusted": ["svg", "pdf"]}"#)
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        #expect(reports.allSatisfy { $0.succeeded }, "\(reports.flatMap(\.failures))")
        // Then each is drawn at the output's size, its colours where they were drawn
        let large = try VipsImage.open(file: directory.path + "/out/large.png").rendered()
        #expect(large.size == ImageSize(width: 40, height: 20))
        #expect(Fixtures.isClose(Array(try large.pixel(x: 10, y: 10).prefix(3)), [255, 0, 0], tolerance: 2))
        #expect(Fixtures.isClose(Array(try large.pixel(x: 30, y: 10).prefix(3)), [0, 0, 255], tolerance: 2))
        let page = try VipsImage.open(file: directory.path + "/out/page.png").rendered()
        #expect(page.size == ImageSize(width: 40, height: 20))
        #expect(Fixtures.isClose(Array(try page.pixel(x: 20, y: 10).prefix(3)), [0, 0, 255], tolerance: 2))
    }

    @Test func anSVGDeclaringASideLibvipsCannotHoldIsRefusedNotDrawnAsAPixel() async throws {
        // Given SVGs declaring 3000000000×300 and 100000000×300 (libvips' headers say 1×300)
        // and 1×1, allowed
        let directory = try TemporaryDirectory()
        let drawing = { (width: String, height: String) in
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)"><rect width="100%" height="100%" fill="red"/></svg>"#
        }
        try directory.write(Data(drawing("3000000000", "300").utf8), to: "in/giant.svg")
        try directory.write(Data(drawing("100000000", "300").utf8), to: "in/long.svg")
        try directory.write(Data(drawing("1", "1").utf8), to: "in/dot.svg")
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""decompress": {"allowUntrusted": ["svg"]}"#)
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then both are refused at decompress as too large, and a real pixel is drawn
        for name in ["giant", "long"] {
            let failure = try #require(reports.first { $0.input.displayName == "in/\(name).svg" }?.failures.first)
            #expect(failure.stage == .decompress && failure.error.kind == .tooManyPixels, "\(failure)")
            #expect(failure.reason.contains("declares a side too long for libvips to size (10000000 pixels"), "\(failure.reason)")
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/\(name).png"))
        }
        #expect(try VipsImage.open(file: directory.path + "/out/dot.png").size == ImageSize(width: 1, height: 1))
    }

    @Test func anSVGIsRefusedEvenWhereAnotherRunInTheProcessUnblockedItsLoader() async throws {
        // Given libvips' SVG loader unblocked for the whole process, as a run that allows SVG
        // leaves it (a `watch` or `serve` process, or an embedder, runs more than one file)
        Vips.unblockLoader(DecompressSettings.UntrustedFormat.svg.loaderClass)
        // When a file that allows neither format runs
        let (directory, reports) = try await runUntrusted(allow: nil)
        // Then the SVG is still refused, by this file's setting
        let failure = try #require(reports.first { $0.input.displayName == "in/drawing.svg" }?.failures.first)
        #expect(failure.reason.contains("add \"svg\" to decompress.allowUntrusted"), "\(failure.reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }

    @Test func aTIFFThatABlockedLoaderAlsoClaimsIsReadAsTheTIFFItIs() async throws {
        // Given a tiled TIFF described as an Aperio slide, which OpenSlide's loader (blocked, as
        // libvips marks it untrusted) claims before libvips' TIFF loader
        let slide = try Fixtures.gradient(width: 96, height: 64)
            .settingStringField("image-description", to: "Aperio Image Library v10.0.50\r\n96x64 (256x256) JPEG/RGB Q=90|AppMag = 20")
        let directory = try TemporaryDirectory()
        try directory.write(try slide.encoded(suffix: ".tif[tile,tile_width=64,tile_height=64]"), to: "in/slide.svs")
        #expect(VipsImage.loaderClass(file: directory.path + "/in/slide.svs")?.hasPrefix("VipsForeignLoadOpenslide") == true)
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(PipelineHarness.json(inputs: ["in/*"], outputs: Self.outputs), in: directory)
        // Then the TIFF loader reads it, where before it was "not an image libvips can read"
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        let full = try VipsImage.open(file: directory.path + "/out/slide.svs.png").rendered()
        #expect(full.size == ImageSize(width: 96, height: 64))
    }

    @Test(arguments: [
        (#"["svg", "magick"]"#, "decompress.allowUntrusted[1]"),
        (#""svg""#, "decompress.allowUntrusted"),
    ])
    func unknownUntrustedFormatsAreRefusedNamingThePath(value: String, path: String) throws {
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{name}.png"}"#],
            extra: #""decompress": {"allowUntrusted": \#(value)}"#)
        do {
            _ = try PipelineHarness.pipeline(json, in: directory)
            Issue.record("accepted \(value)")
        } catch let error as PipelineFileError {
            #expect("\(error)".contains(path), "\(error)")
        }
    }

    @Test func explainCountsTheRefusedInputsAndNamesTheAllowedFormats() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Self.svg, to: "in/drawing.svg")
        try directory.write(Self.pdf, to: "in/page.pdf")
        func explanation(_ extra: String) throws -> String {
            let json = PipelineHarness.json(
                inputs: ["in/*"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{name}.png"}"#], extra: extra)
            return PlanExplanation(plan: try PipelineHarness.pipeline(json, in: directory).plan(), memoryBudget: nil).text
        }
        let neither = try explanation("")
        #expect(
            neither.contains("2 inputs are SVG or PDF, which the run refuses: add the format to decompress.allowUntrusted"), "\(neither)")
        let svg = try explanation(#""decompress": {"allowUntrusted": ["svg"]}"#)
        #expect(svg.contains("untrusted formats read (decompress.allowUntrusted): svg"), "\(svg)")
        #expect(svg.contains("1 input is SVG or PDF, which the run refuses"), "\(svg)")
        #expect(svg.contains("in/drawing.svg: svg 40×20"), "\(svg)")
    }

    @Test func theSettingIsReadIntoTheDefinition() throws {
        let json = PipelineHarness.json(
            inputs: ["a.svg"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{name}.png"}"#],
            extra: #""decompress": {"allowUntrusted": ["pdf", "svg"]}"#)
        let definition = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        #expect(definition.decompress.allowUntrusted == [.svg, .pdf])
        let plain = try PipelineDefinition(
            json: PipelineHarness.json(
                inputs: ["a.svg"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{name}.png"}"#]),
            baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        #expect(plain.decompress.allowUntrusted.isEmpty)
    }
}
