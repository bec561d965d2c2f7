import Foundation
import TestSupport
import Testing

@testable import PipelineCLI
@testable import PipelineKit

/// `pipeline html` over every input of a manifest a real run wrote: printed in the manifest's
/// order, or one file per input with `--out`.
@Suite struct HTMLCommandTests {
    /// Four photos, two of them named `photo.jpg` in different folders, after a run.
    func prepare() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "photos/a/photo.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 240, height: 180)), to: "photos/b/photo.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 100, height: 150)), to: "photos/b/photo-2.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 90)), to: "photos/c/manifest.jpg")
        try directory.write(
            Data(
                """
                {"version": 1, "name": "site", "inputs": ["photos/**/*.jpg"],
                 "manifest": {"path": "public/manifest.html", "urlPrefix": "/img/"},
                 "outputs": [{"name": "web", "encode": {"format": "webp"}, "path": "public/{dir}/{stem}.webp"}]}
                """.utf8), to: "site.json")
        let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("site.json").path])
        #expect(run.status == 0, "\(run.standardError)")
        return directory
    }

    func manifest(_ directory: TemporaryDirectory) -> String { directory.url.appendingPathComponent("public/manifest.html").path }

    /// A file that is not a manifest is named with the reason: the system's, or where its JSON
    /// went wrong, never Foundation's "The data isn't in the correct format".
    @Test func aManifestThatCannotBeReadIsNamedWithTheReason() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("nonsense".utf8), to: "words.json")
        try directory.write(Data(#"{"x": 1}"#.utf8), to: "other.json")
        // The pipeline file itself, an easy slip: named as one, with the manifest its run writes
        let outputs = #""outputs": [{"name": "web", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]"#
        try directory.write(
            Data(#"{"version": 1, "inputs": ["in/*.jpg"], "manifest": {"path": "out/m.json"}, \#(outputs)}"#.utf8), to: "site.json")
        try directory.write(Data(#"{"version": 1, "inputs": ["in/*.jpg"], \#(outputs)}"#.utf8), to: "plain.json")
        try directory.write(Data(#"{"version": 1, "inputs": ["in/*.jpg"], "manifest": 5, \#(outputs)}"#.utf8), to: "broken.json")
        let cases: [(String, String)] = [
            ("missing.json", ": not a manifest pipeline can read: No such file or directory"),
            ("", ": not a manifest pipeline can read: it is a folder, not a regular file"),
            ("words.json", ": not a manifest pipeline can read: not JSON"),
            ("other.json", ": not a manifest pipeline can read: missing key \""),
            ("site.json", ": a pipeline file, not a manifest; its run writes the manifest to \(directory.url.path)/out/m.json\n"),
            ("plain.json", ": a pipeline file, not a manifest; it has no \"manifest\" section, so its run writes none\n"),
            ("broken.json", ": a pipeline file, not a manifest; it does not load as it is (`pipeline validate` says why), so "),
        ]
        for (name, expected) in cases {
            let path = directory.url.appendingPathComponent(name).path
            let result = try CommandRunner.run(["html", path])
            #expect(result.status == 2, "\(name)")
            #expect(result.standardError.hasPrefix(path + expected), "\(name): \(result.standardError)")
        }
    }

    @Test func outOntoAFileIsRefusedAsARunRefusesIt() throws {
        let directory = try prepare()
        try directory.write(Data("notes".utf8), to: "notes")
        let onto = directory.url.appendingPathComponent("notes").path
        for folder in [onto, onto + "/pages"] {
            let result = try CommandRunner.run(["html", manifest(directory), "--out", folder])
            #expect(result.status == 2, "\(result.standardError)")
            #expect(result.standardError == "\(folder): \(onto) is a file, not a folder\n")
        }
        #expect(try String(contentsOfFile: onto, encoding: .utf8) == "notes")
    }

    @Test func aManifestWithoutInputsSaysSo() throws {
        let directory = try prepare()
        let path = manifest(directory)
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        document["inputs"] = [Any]()
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
        let result = try CommandRunner.run(["html", path])
        #expect(result.status == 2 && result.standardError == path + ": lists no input\n", "\(result.standardError)")
        let named = try CommandRunner.run(["html", path, "a.jpg"])
        #expect(named.status == 2 && named.standardError == path + ": no input \"a.jpg\" (it has none)\n", "\(named.standardError)")
    }

    @Test func withNoInputNamedEveryInputIsPrintedInTheManifestsOrder() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(["html", manifest(directory)])
        #expect(result.status == 0, "\(result.standardError)")
        let sources = try ImageManifest.read(from: URL(fileURLWithPath: manifest(directory))).inputs.map(\.source)
        #expect(sources.count == 4)
        let comments = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("<!--") }
        #expect(comments == sources.map { "<!-- \($0) -->"[...] })
        #expect(result.standardOutput.components(separatedBy: "<picture>").count == 5)
        // Each input's markup follows its comment
        let blocks = result.standardOutput.components(separatedBy: "<!-- ").dropFirst()
        for (block, source) in zip(blocks, sources) {
            let stem = ((source as NSString).deletingPathExtension)
            let folder = (stem as NSString).deletingLastPathComponent.replacingOccurrences(of: "photos/", with: "")
            #expect(block.contains("src=\"/img/\(folder)/\((stem as NSString).lastPathComponent).webp\""), "\(block)")
        }
        // A named input prints its element alone, as before
        let one = try CommandRunner.run(["html", manifest(directory), "a/photo.jpg"])
        #expect(one.status == 0 && one.standardOutput.hasPrefix("<picture>\n"), "\(one.standardError)")
    }

    @Test func anInputsCommentCannotEndEarlyOrHoldControlCharacters() {
        // A name with a comment's end, a newline and an escape sequence that would turn the terminal red
        let comment = PipelineCommand.HTML.comment(naming: "a-->b\n\u{1B}[31mc--d.jpg")
        #expect(comment == #"<!-- a- ->b\n\u001b[31mc- -d.jpg -->"#)
    }

    @Test func aPageIsNamedByItsURLsNameAsTheRunNamesItsFiles() {
        #expect(PipelineCommand.HTML.fileStem(of: "http://h/photos/caf%E9.jpg?v=2") == "caf%E9")
        #expect(PipelineCommand.HTML.fileStem(of: "http://h/photos/caf%C3%A9.jpg") == "café")
        #expect(PipelineCommand.HTML.fileStem(of: "https://h/shop/a.jpg;jsessionid=…") == "a")
    }

    @Test func outWritesOneFilePerInputNamedByStemWithoutTouchingTheManifest() throws {
        let directory = try prepare()
        let manifestBefore = try Data(contentsOf: URL(fileURLWithPath: manifest(directory)))
        // The manifest's own folder, where "manifest.html" is the manifest: never written onto.
        let out = directory.url.appendingPathComponent("public").path
        let result = try CommandRunner.run(["html", manifest(directory), "--out", out])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: manifest(directory))) == manifestBefore)
        let written = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".html") }.sorted()
        // a/photo, b/photo-2, b/photo, c/manifest (the manifest's order): photo.html, photo-2.html, then the
        // next free photo-N and a name past the manifest's own
        #expect(written == ["manifest-2.html", "manifest.html", "photo-2.html", "photo-3.html", "photo.html"])
        let text = { (name: String) in try String(contentsOfFile: out + "/" + name, encoding: .utf8) }
        #expect(try text("photo.html").contains("src=\"/img/a/photo.webp\""))
        #expect(try text("photo-2.html").contains("src=\"/img/b/photo-2.webp\""))
        #expect(try text("photo-3.html").contains("src=\"/img/b/photo.webp\""))
        #expect(try text("manifest-2.html").contains("src=\"/img/c/manifest.webp\""))

        // A folder that does not exist yet is made; the same manifest names its files the same way
        let fresh = directory.url.appendingPathComponent("snippets/deep").path
        #expect(try CommandRunner.run(["html", manifest(directory), "--out", fresh]).status == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fresh).sorted()
                == ["manifest.html", "photo-2.html", "photo-3.html", "photo.html"])
        #expect(try CommandRunner.run(["html", "--help"]).standardOutput.contains("photo-2.html"))
    }

    /// A numbered page never takes the name of a later input's own stem, which would then be
    /// another photo's page once that input was added.
    @Test func aNumberedPageNeverTakesAnotherInputsOwnName() throws {
        // Given a/photo, b/photo-2, b/photo, and now c/photo-3, after b/photo in the manifest
        let directory = try prepare()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 80, height: 60)), to: "photos/c/photo-3.jpg")
        #expect(try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("site.json").path]).status == 0)
        let out = directory.url.appendingPathComponent("pages").path
        #expect(try CommandRunner.run(["html", manifest(directory), "--out", out]).status == 0)
        // Then photo-3.html is c/photo-3's, and b/photo takes the next free number
        let text = { (name: String) in try String(contentsOfFile: out + "/" + name, encoding: .utf8) }
        #expect(try text("photo-3.html").contains("src=\"/img/c/photo-3.webp\""))
        #expect(try text("photo-4.html").contains("src=\"/img/b/photo.webp\""))
        #expect(try text("photo-2.html").contains("src=\"/img/b/photo-2.webp\""))
    }

    @Test func withNoOutputNamedTheOneWithTheMostFilesIsShown() throws {
        // Given a photo made as a thumbnail ("a-thumb", first by name) and as a responsive set
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "photos/photo.jpg")
        try directory.write(
            Data(
                """
                {"version": 1, "name": "site", "inputs": ["photos/*.jpg"],
                 "manifest": {"path": "public/manifest.json", "urlPrefix": "/img/"},
                 "outputs": [
                   {"name": "a-thumb", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "public/{stem}-thumb.jpg"},
                   {"name": "set", "widths": [100, 200], "formats": ["webp", "jpeg"], "path": "public/{stem}-{width}.{format}"}]}
                """.utf8), to: "site.json")
        let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("site.json").path])
        #expect(run.status == 0, "\(run.standardError)")
        let manifest = directory.url.appendingPathComponent("public/manifest.json").path
        // When no output is named, the responsive set is shown
        let result = try CommandRunner.run(["html", manifest, "photo.jpg"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("/img/photo-200.webp 200w"), "\(result.standardOutput)")
        #expect(!result.standardOutput.contains("thumb"), "\(result.standardOutput)")
        // And the thumbnail when it is named
        let named = try CommandRunner.run(["html", manifest, "photo.jpg", "--output", "a-thumb"])
        #expect(named.standardOutput.contains("/img/photo-thumb.jpg"), "\(named.standardOutput)")
    }

    @Test func aTilePyramidIsPassedOverAndNamedWhenItIsAllThereIs() throws {
        // Given a photo made as a tile pyramid ("a-zoom", first by name) and as a thumbnail
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 600, height: 400)), to: "photos/photo.jpg")
        let outputs = [
            #"{"name": "a-zoom", "tiles": {"layout": "dz"}, "path": "public/{stem}.dzi"}"#,
            #"{"name": "thumb", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "public/{stem}-thumb.jpg"}"#,
        ]
        for (file, outputs) in [("both.json", outputs), ("tiles.json", [outputs[0]])] {
            try directory.write(
                Data(
                    """
                    {"version": 1, "inputs": ["photos/*.jpg"], "manifest": {"path": "public/\(file)", "urlPrefix": "/img/"},
                     "outputs": [\(outputs.joined(separator: ", "))]}
                    """.utf8), to: file)
            let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent(file).path])
            #expect(run.status == 0, "\(run.standardError)")
        }
        let both = directory.url.appendingPathComponent("public/both.json").path
        let tiles = directory.url.appendingPathComponent("public/tiles.json").path
        // When no output is named, the image output is shown rather than the pyramid
        let shown = try CommandRunner.run(["html", both, "photo.jpg"])
        #expect(shown.status == 0 && shown.standardOutput.contains("/img/photo-thumb.jpg"), "\(shown.standardError)")
        // A pyramid named, or all an input has, is refused as a pyramid with its URL, not as "no files"
        let named = try CommandRunner.run(["html", both, "photo.jpg", "--output", "a-zoom"])
        #expect(named.status == 2, "\(named.standardOutput)")
        #expect(
            named.standardError.hasPrefix(both + ": photos/photo.jpg → a-zoom is a tile pyramid (/img/photo.dzi): a zooming viewer"),
            "\(named.standardError)")
        let only = try CommandRunner.run(["html", tiles, "photo.jpg"])
        #expect(
            only.status == 2 && only.standardError.hasPrefix(tiles + ": photos/photo.jpg has only tile pyramids (a-zoom): "),
            "\(only.standardError)")
        let every = try CommandRunner.run(["html", tiles])
        #expect(every.status == 2 && every.standardError.hasPrefix(tiles + ": every output is a tile pyramid: "), "\(every.standardError)")
    }

    @Test func anOutputMadeInPartIsMarkedInTheManifestAndHTMLWarnsOfIt() throws {
        // Given a photo too wide for WebP, made at its own width in JPEG and WebP
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 17000, height: 8)), to: "photos/wide.png")
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["photos/*.png"], "manifest": {"path": "public/manifest.json"},
                 "outputs": [{"name": "set", "widths": [40, "original"], "formats": ["jpeg", "webp"], "path": "public/{stem}-{width}.{format}"}]}
                """.utf8), to: "site.json")
        let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("site.json").path])
        #expect(run.status == 1, "\(run.standardError)")
        // Then its entry lists the files made, and names the one that failed
        let manifest = directory.url.appendingPathComponent("public/manifest.json").path
        let entry = try #require(try ImageManifest.read(from: URL(fileURLWithPath: manifest)).inputs.first?.outputs["set"])
        #expect(entry.formats.map { $0.files.map(\.width) } == [[40, 17000], [40]])
        #expect(entry.failed == ["its own width, webp"], "\(String(describing: entry.failed))")
        // And html prints the markup of the files made, warning that the set is short
        let html = try CommandRunner.run(["html", manifest, "wide.png"])
        #expect(html.status == 0 && html.standardOutput.contains("wide-40.webp 40w"), "\(html.standardError)")
        #expect(
            html.standardError.hasPrefix(
                "warning: \(manifest): photos/wide.png → set lacks files its run failed to make (its own width, webp)"),
            "\(html.standardError)")
    }
}
