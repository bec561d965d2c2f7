import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `report.json` and `index.html` from real runs: what a person opening the page relies on.
@Suite struct ReportWriterTests {
    static let oddName = #"a<b>&"c".jpg"#

    /// Two outputs per input: a 64×64 WebP and a 120 px wide JPEG.
    static let twoOutputs = [
        #"{"name": "small", "steps": [{"resize": {"width": 64, "height": 64, "fit": "cover"}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#,
        #"{"name": "large", "steps": [{"resize": {"width": 120}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-large.jpg"}"#,
    ]

    /// Runs `pipeline`, feeding every event to a recorder, as the CLI does.
    static func record(_ pipeline: Pipeline) async throws -> RunRecorder {
        let recorder = try RunRecorder(definition: pipeline.definition)
        for await event in try pipeline.run() {
            recorder.record(event)
        }
        return recorder
    }

    /// A good input, the odd-named good input whose `large` output cannot be written (a folder
    /// stands at its path), and a text file named `.jpg`.
    static func runWithFailures(in directory: TemporaryDirectory) async throws -> (RunRecorder, Pipeline) {
        try directory.write(Fixtures.jpeg(Fixtures.gradient(width: 300, height: 200)), to: "good.jpg")
        try directory.write(Fixtures.jpeg(Fixtures.gradient(width: 240, height: 160)), to: oddName)
        try directory.write(Data("this is a shopping list, not a photograph\n".utf8), to: "broken.jpg")
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent(#"out/a<b>&"c"-large.jpg"#), withIntermediateDirectories: true)
        let pipeline = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["*.jpg"], outputs: twoOutputs), in: directory)
        return (try await record(pipeline), pipeline)
    }

    static func decodeReport(_ data: Data) throws -> RunReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(RunReport.self, from: data)
    }

    /// The values of `attribute` in every `element` tag, HTML entities undone.
    static func attributeValues(_ attribute: String, of element: String, in html: String) throws -> [String] {
        let pattern = try Regex<(Substring, Substring)>("<\(element)\\b[^>]*?\\s\(attribute)=\"([^\"]*)\"")
        return html.matches(of: pattern).map { match in
            String(match.output.1)
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    static func count(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// Each image's width and height, as a pair the expectations spell as literals.
    static func shapes(_ images: [VipsImage]) -> [[Int]] { images.map { [$0.width, $0.height] } }

    /// Checks every image of the page: embedded JPEG thumbnails, or files that exist when the
    /// reference is resolved against the report folder. Returns (data URIs, file references).
    static func checkImages(in html: String, reportFolder: URL) throws -> (embedded: [VipsImage], files: [String]) {
        var embedded: [VipsImage] = [], files: [String] = []
        let base = URL(fileURLWithPath: reportFolder.path + "/")
        for source in try attributeValues("src", of: "img", in: html) {
            if source.hasPrefix("data:") {
                let prefix = "data:image/jpeg;base64,"
                #expect(source.hasPrefix(prefix), "\(source.prefix(40))")
                let bytes = try #require(Data(base64Encoded: String(source.dropFirst(prefix.count))))
                #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]))
                let image = try VipsImage.open(data: bytes)
                #expect(image.loader?.hasPrefix("jpegload") == true)
                #expect(max(image.width, image.height) <= ReportThumbnail.side)
                embedded.append(image)
            } else {
                #expect(!source.contains("://") && !source.hasPrefix("/"), "not relative: \(source)")
                let file = try #require(URL(string: source, relativeTo: base)).standardizedFileURL.path
                #expect(FileManager.default.fileExists(atPath: file), "\(source) → \(file)")
                files.append(file)
            }
        }
        return (embedded, files)
    }

    @Test func writesTheJSONReportAndAPageWithACardPerInput() async throws {
        let directory = try TemporaryDirectory()
        let (recorder, pipeline) = try await Self.runWithFailures(in: directory)
        let folder = directory.url.appendingPathComponent("reports/run 1", isDirectory: true)

        try await ReportWriter.write(recorder.report, to: folder, inputDirectory: pipeline.definition.baseDirectory)

        // Only the two files: the temporary ones were renamed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["index.html", "report.json"])
        let json = try Data(contentsOf: folder.appendingPathComponent("report.json"))
        #expect(json == (try recorder.reportJSON()))
        let report = try Self.decodeReport(json)
        #expect(report.inputs == 3 && report.succeeded == 1 && report.failed == 2)
        let items = Dictionary(uniqueKeysWithValues: report.items.map { ($0.input, $0) })
        let good = try #require(items["good.jpg"])
        let broken = try #require(items["broken.jpg"])
        let odd = try #require(items[Self.oddName])
        #expect(good.status == .succeeded && good.outputs.allSatisfy { $0.status == .succeeded })
        #expect(broken.status == .failed && broken.stage == .decompress)
        #expect(odd.status == .failed && odd.error == nil)
        #expect(odd.outputs.map(\.status) == [.succeeded, .failed])
        #expect(odd.outputs[1].stage == .encode)

        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(Self.count(of: "<article class=\"card", in: html) == 3)
        #expect(Self.count(of: "<article class=\"card failed\"", in: html) == 2)
        // Escaped wherever it appears: the card, the failure table, the failed output's reason.
        #expect(html.contains(#"a&lt;b&gt;&amp;&quot;c&quot;.jpg"#))
        #expect(!html.contains(Self.oddName))
        let oddReason = try #require(odd.outputs[1].error)
        #expect(oddReason.contains(#"a<b>&"c"-large.jpg"#))
        #expect(html.contains(oddReason.htmlEscaped))
        #expect(html.contains(try #require(broken.error).htmlEscaped))
        #expect(html.contains("not an image libvips can read"))

        // Every picture embedded: two inputs (the broken one has none) and three outputs; each
        // output links to its file.
        let images = try Self.checkImages(in: html, reportFolder: folder)
        #expect(images.embedded.count == 5 && images.files.isEmpty)
        #expect(Self.shapes(images.embedded.filter { $0.width == 160 }) == [[160, 107], [160, 107]])
        let written = report.items.flatMap(\.outputs).compactMap(\.path).sorted()
        #expect(written.count == 3)
        let links = try Self.attributeValues("href", of: "a", in: html)
        #expect(links.compactMap { URL(string: $0)?.path }.sorted() == written)
        #expect(links.allSatisfy { $0.hasPrefix("file:///") })
        #expect(Self.count(of: "<figure class=\"output failed\">", in: html) == 3)

        // The stage chart: one bar per stage that ran, decompress among them with work drawn.
        #expect(html.contains("<svg class=\"stage-bar\" data-stage=\"decompress\""))
        #expect(html.contains("<svg class=\"stage-bar\" data-stage=\"encode\""))
        let busy = html.firstMatch(of: #/data-stage="decompress"[^>]*>.*?<rect class="busy" x="0" y="0" width="([0-9.]+)"/#)
        #expect(Double(try #require(busy).output.1).map { $0 > 0 } == true)

        // Nothing from the network, nothing to run.
        #expect(!html.contains("http://") && !html.contains("https://"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("@import") && !html.contains("url("))
    }

    /// A name's control characters are shown as escapes, as standard error shows them: raw, an
    /// escape byte is a parse error and drives a terminal that prints the page.
    @Test func aNamesControlCharactersAreShownEscapedOnThePage() async throws {
        let directory = try TemporaryDirectory()
        let name = "new\nline\u{1B}[31m.jpg"
        try directory.write(Data("not a photograph".utf8), to: name)
        let pipeline = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["*.jpg"], outputs: Self.twoOutputs), in: directory)
        let recorder = try await Self.record(pipeline)
        let folder = directory.url.appendingPathComponent("report", isDirectory: true)
        try await ReportWriter.write(recorder.report, to: folder, inputDirectory: pipeline.definition.baseDirectory)
        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(html.contains(#"new\nline\u001b[31m.jpg"#), "\(html)")
        #expect(!html.unicodeScalars.contains { $0.value == 0x1B })
        #expect(!html.contains("new\nline"))
    }

    @Test func aURLInputIsPreviewedFromItsLargestOutputWithoutTheNetwork() async throws {
        let photo = try Fixtures.jpeg(Fixtures.gradient(width: 400, height: 200))
        let server = try TestHTTPServer { _, _ in .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: photo) }
        let directory = try TemporaryDirectory()
        let url = server.url("/photos/sea.jpg")
        let json = PipelineHarness.json(
            inputs: [url],
            outputs: [
                #"{"name": "tiny", "steps": [{"resize": {"width": 40}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-tiny.jpg"}"#,
                #"{"name": "wide", "steps": [{"resize": {"width": 300}}], "encode": {"format": "png"}, "path": "out/{stem}-wide.png"}"#,
            ], extra: #""cache": {"directory": "cache"}"#)
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let recorder = try await Self.record(pipeline)
        #expect(try recorder.report.succeeded == 1)
        let requests = server.requests.count
        let folder = directory.url.appendingPathComponent("report")

        try await ReportWriter.write(recorder.report, to: folder)

        #expect(server.requests.count == requests, "writing the report must not fetch the input")
        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        let images = try Self.checkImages(in: html, reportFolder: folder)
        // The preview has the 300×150 output's shape, fitted inside 160 px, beside both outputs'.
        #expect(Self.shapes(images.embedded).sorted { $0[0] < $1[0] } == [[40, 20], [160, 80], [160, 80]])
        #expect(html.contains("preview from wide"))
        #expect(images.files.isEmpty)
        // The URL is shown as text, never used as a resource.
        #expect(html.contains(url.htmlEscaped))
        for attribute in ["src", "href"] {
            for element in ["img", "a", "link"] {
                #expect(try Self.attributeValues(attribute, of: element, in: html).allSatisfy { !$0.lowercased().hasPrefix("http") })
            }
        }
    }

    @Test func aSearchedQualityIsShownBesideItsFile() async throws {
        // Given an output whose quality is searched, and one at a fixed quality
        let directory = try TemporaryDirectory()
        try directory.write(Fixtures.jpeg(Fixtures.gradient(width: 300, height: 200)), to: "photo.jpg")
        let outputs = [
            #"{"name": "searched", "encode": {"format": "webp", "quality": {"ssimulacra2": 70}}, "path": "out/{stem}-searched.webp"}"#,
            #"{"name": "fixed", "encode": {"format": "webp", "quality": 80}, "path": "out/{stem}-fixed.webp"}"#,
        ]
        let recorder = try await Self.record(
            try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["*.jpg"], outputs: outputs), in: directory))
        let folder = directory.url.appendingPathComponent("report", isDirectory: true)
        try await ReportWriter.write(recorder.report, to: folder)
        // When the page is read, then the searched file's caption gives the quality chosen and its score, once
        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        let chosen = try #require(recorder.report.items.first?.outputs.first { $0.name == "searched" }?.quality)
        #expect(html.contains("<span class=\"quality\">quality \(chosen), searched · SSIMULACRA 2 "), "\(html)")
        #expect(Self.count(of: "<span class=\"quality\">", in: html) == 1)
    }

    @Test func theReportFolderShowsEveryPictureAfterItIsMoved() async throws {
        // Given a report written beside the outputs
        let directory = try TemporaryDirectory()
        let (recorder, pipeline) = try await Self.runWithFailures(in: directory)
        let folder = directory.url.appendingPathComponent("report", isDirectory: true)
        try await ReportWriter.write(recorder.report, to: folder, inputDirectory: pipeline.definition.baseDirectory)

        // When the folder is moved elsewhere, as a CI artefact is
        let elsewhere = try TemporaryDirectory()
        let moved = elsewhere.url.appendingPathComponent("artefacts/report", isDirectory: true)
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder, to: moved)

        // Then every <img> still shows (embedded, or a file that exists from the new place), and
        // the links to outputs still reach the real files
        let html = try String(contentsOf: moved.appendingPathComponent("index.html"), encoding: .utf8)
        let images = try Self.checkImages(in: html, reportFolder: moved)
        #expect(images.embedded.count == 5)
        for link in try Self.attributeValues("href", of: "a", in: html) {
            let path = try #require(URL(string: link)?.path, "\(link)")
            #expect(FileManager.default.fileExists(atPath: path), "\(link)")
        }
    }

    @Test(arguments: [(500, 1), (1, 500), (1600, 3)])
    func aJPEGFewerPixelsHighOrWideThanItsShrinkOnLoadIsPreviewed(width: Int, height: Int) throws {
        // Given a JPEG banner a few pixels high (or wide): shrunk on load past that side, libvips
        // would abort the process
        let directory = try TemporaryDirectory()
        let path = try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height)), to: "banner.jpg")
        // Then it is previewed, fitted inside the thumbnail's side
        let preview = try #require(ReportThumbnail.dataURI(forImageAt: path))
        #expect(max(preview.width, preview.height) == ReportThumbnail.side)
    }

    @Test func linksAreAbsoluteFileURLsPercentEncoded() {
        #expect(HTMLReport.fileURL(forPath: "/srv/site/out/x/a b#1?.webp") == "file:///srv/site/out/x/a%20b%231%3F.webp")
        #expect(HTMLReport.fileURL(forPath: "/srv/site/out/c:d%.jpg") == "file:///srv/site/out/c%3Ad%25.jpg")
        #expect(HTMLReport.fileURL(forPath: "/var/images/ü.png") == "file:///var/images/%C3%BC.png")
        #expect(HTMLReport.fileURL(forPath: "/srv/site/report/../out/./a.jpg") == "file:///srv/site/out/a.jpg")
        #expect(HTMLReport.fileURL(forPath: "out/a.jpg") == "file://" + FileManager.default.currentDirectoryPath + "/out/a.jpg")
    }

    @Test func rewritingReplacesBothFilesAtomically() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(Fixtures.jpeg(Fixtures.solid(width: 50, height: 40)), to: "one.jpg")
        let pipeline = try PipelineHarness.pipeline(PipelineHarness.json(inputs: ["*.jpg"], outputs: Self.twoOutputs), in: directory)
        let folder = directory.url.appendingPathComponent("report")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: folder.appendingPathComponent("report.json"))
        try Data("old".utf8).write(to: folder.appendingPathComponent("index.html"))

        try await ReportWriter.write(try await Self.record(pipeline).report, to: folder)

        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["index.html", "report.json"])
        #expect(try Self.decodeReport(Data(contentsOf: folder.appendingPathComponent("report.json"))).succeeded == 1)
        #expect(try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8).hasPrefix("<!doctype html>"))
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("index.html").path)
        let mode = try #require(attributes[.posixPermissions] as? Int)
        #expect(mode & 0o044 == 0o044, "readable by a web server, not private like a temporary file (mode \(String(mode, radix: 8)))")
    }

    @Test func aFolderThatCannotBeMadeIsAnErrorNamingIt() async throws {
        let directory = try TemporaryDirectory()
        let blocker = try directory.write(Data("a file".utf8), to: "taken")
        let report = RunReport(
            pipeline: "p", version: "1", startedAt: Date(), elapsedSeconds: 0, inputs: 0, succeeded: 0, failed: 0,
            notRun: 0, outputsWritten: 0, outputsUpToDate: 0, cancelled: false, stages: [], items: [])
        let error = #expect(throws: ReportWriterError.self) {
            try ReportWriter.write(report, to: URL(fileURLWithPath: blocker + "/report"))
        }
        #expect(error?.path == blocker + "/report")
    }

    /// A rate of inputs that all failed would read as images made; a run that made some gives it.
    @Test func theHeaderGivesARateOnlyWhenSomethingSucceeded() {
        func header(succeeded: Int, failed: Int) -> String {
            let report = RunReport(
                pipeline: "p", version: "1", startedAt: Date(), elapsedSeconds: 2, inputs: succeeded + failed, succeeded: succeeded,
                failed: failed, notRun: 0, outputsWritten: succeeded, outputsUpToDate: 0, cancelled: false, stages: [], items: [])
            return HTMLReport(report: report, inputDirectory: nil).render()
        }
        #expect(!header(succeeded: 0, failed: 40).contains("images/s"))
        #expect(header(succeeded: 1, failed: 39).contains("images/s"))
    }

    /// The sample run `.ci/report-screenshot.sh` photographs: `Pipelines/thumbnails.json` over
    /// the bundled samples, plus a text file named `.jpg`, and one output that cannot be written.
    @Test func theSampleRunsReportHasACardPerInputAndEmbedsEveryImage() async throws {
        let scratch = try TemporaryDirectory()
        let folder = scratch.url
        let work = folder.appendingPathComponent("run", isDirectory: true)
        let samples = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("samples"), withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: samples.path) where name.hasSuffix(".jpg") {
            try FileManager.default.copyItem(at: samples.appendingPathComponent(name), to: work.appendingPathComponent("samples/" + name))
        }
        try Data("<html>404 Not Found</html>\n".utf8).write(to: work.appendingPathComponent("samples/broken.jpg"))
        try FileManager.default.createDirectory(at: work.appendingPathComponent("out/storm-large.jpg"), withIntermediateDirectories: true)
        let json = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json"), encoding: .utf8)
        let pipeline = try Pipeline(json: json, baseDirectory: work, processors: .standard)

        let recorder = try await Self.record(pipeline)
        try await ReportWriter.write(recorder.report, to: folder, inputDirectory: pipeline.definition.baseDirectory)

        let report = try recorder.report
        #expect(report.inputs == 6 && report.succeeded == 4 && report.failed == 2)
        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(Self.count(of: "<article class=\"card", in: html) == 6)
        let images = try Self.checkImages(in: html, reportFolder: folder)
        // Five input previews and every output written (five inputs, three outputs, one blocked).
        let inputsAndOutputs: Int = 5 + (5 * 3 - 1)
        #expect(images.embedded.count == inputsAndOutputs)
        #expect(images.files.isEmpty)
    }
}
