import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The manifest a run writes for web pages, read back and checked against the files and an
/// independent JSON Schema validator; `pipeline html` on it.
@Suite struct ManifestTests {
    /// Three photos: two landscape, one portrait; two outputs, one with placeholders.
    func prepare() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 800, height: 600)), to: "photos/a.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 640, height: 480)), to: "photos/b.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 500)), to: "photos/c.jpg")
        try directory.write(Data(pipelineJSON.utf8), to: "site.json")
        return directory
    }

    let pipelineJSON = """
        {"version": 1, "name": "site", "inputs": ["photos/*.jpg"],
         "manifest": {"path": "public/img/manifest.json", "urlPrefix": "/img/"},
         "outputs": [
           {"name": "hero", "steps": [{"resize": {"width": 400}}], "encode": {"format": "webp"}, "path": "public/img/{stem}-hero.webp",
            "placeholders": ["lqip", "blurhash", "thumbhash", "dominantColor"]},
           {"name": "thumb", "steps": [{"resize": {"width": 96, "height": 96}}], "encode": {"format": "jpeg"}, "path": "public/img/thumbs/{stem}.jpg"}
         ]}
        """

    func run(_ directory: TemporaryDirectory) throws -> CommandRunner.Result {
        try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("site.json").path])
    }

    var manifestPath: (TemporaryDirectory) -> URL { { $0.url.appendingPathComponent("public/img/manifest.json") } }

    @Test func theManifestDescribesEveryFileAsItIs() throws {
        let directory = try prepare()
        let result = try run(directory)
        #expect(result.status == 0, "\(result.standardError)")
        let manifest = try ImageManifest.read(from: manifestPath(directory))

        #expect(manifest.pipeline == "site")
        #expect(manifest.inputs.map(\.source) == ["photos/a.jpg", "photos/b.jpg", "photos/c.jpg"])
        let c = try #require(manifest.input("photos/c.jpg"))
        #expect((c.width, c.height) == (300, 500))
        for input in manifest.inputs {
            #expect(Set(input.outputs.keys) == ["hero", "thumb"])
            for (name, output) in input.outputs {
                for format in output.formats {
                    #expect(format.srcset == format.files.map { "\($0.url) \($0.width)w" }.joined(separator: ", "))
                    for file in format.files {
                        // Every claim about a file is true of the file on disk
                        let onDisk = directory.url.appendingPathComponent("public/img").appendingPathComponent(file.path)
                        let attributes = try FileManager.default.attributesOfItem(atPath: onDisk.path)
                        #expect((attributes[.size] as? Int) == file.bytes, "\(file.path)")
                        let image = try VipsImage.open(file: onDisk.path)
                        #expect((image.width, image.height) == (file.width, file.height))
                        #expect(file.url == "/img/" + file.path)
                        #expect(file.mimeType == (name == "hero" ? "image/webp" : "image/jpeg"))
                    }
                }
                #expect(output.fallback == output.formats.last?.files.last)
            }
            let placeholders = try #require(input.outputs["hero"]?.placeholders)
            #expect(placeholders.lqip?.hasPrefix("data:image/webp;base64,") == true)
            #expect(placeholders.blurhash?.count == 28)  // 4×3 components: 4 + 2 × 12 characters
            #expect(placeholders.thumbhash != nil && placeholders.dominantColor?.count == 7)
            #expect(input.outputs["thumb"]?.placeholders == nil)
        }
        #expect(manifest.input("photos/a.jpg")?.outputs["thumb"]?.formats.first?.files.first?.path == "thumbs/a.jpg")
    }

    @Test func anIncrementalRunKeepsUpToDateEntriesDropsVanishedInputsAndIsStable() throws {
        let directory = try prepare()
        #expect(try run(directory).status == 0)
        let first = try Data(contentsOf: manifestPath(directory))

        // Nothing changed: the same bytes
        #expect(try run(directory).status == 0)
        #expect(try Data(contentsOf: manifestPath(directory)) == first)

        // One input changed (now 200 wide), one removed
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "photos/a.jpg")
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("photos/b.jpg"))
        #expect(try run(directory).status == 0)
        let manifest = try ImageManifest.read(from: manifestPath(directory))
        #expect(manifest.inputs.map(\.source) == ["photos/a.jpg", "photos/c.jpg"])
        #expect(manifest.input("photos/a.jpg")?.width == 200 && manifest.input("photos/a.jpg")?.height == 100)
        let earlier = try JSONDecoder().decode(ImageManifest.self, from: first)
        #expect(manifest.input("photos/c.jpg") == earlier.input("photos/c.jpg"))
    }

    @Test func theManifestMatchesItsSchema() throws {
        let directory = try prepare()
        #expect(try run(directory).status == 0)
        let schema = try CommandRunner.run(["schema", "--manifest"])
        #expect(schema.status == 0)
        let schemaFile = try directory.write(Data(schema.standardOutput.utf8), to: "manifest.schema.json")
        #expect(try SchemaValidator.errorCounts(schema: schemaFile, documents: [manifestPath(directory).path]) == [0])
    }

    @Test func aManifestOfEveryFormatMatchesItsSchema() throws {
        // Given one output in every format an encoder writes
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "photos/a.jpg")
        let formats = EncoderSettings.Format.allCases.map { #"{"format": "\#($0.rawValue)"}"# }.joined(separator: ", ")
        let json = """
            {"version": 1, "inputs": ["photos/*.jpg"], "manifest": {"path": "public/manifest.json"},
             "outputs": [{"name": "all", "widths": [32], "formats": [\(formats)], "path": "public/{stem}-{width}.{format}"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "all.json")
        let result = try CommandRunner.run(["run", "--quiet", file])
        #expect(result.status == 0, "\(result.standardError)")
        // When the manifest is checked against the schema, then it holds, every format in it
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("public/manifest.json"))
        #expect(manifest.inputs.first?.outputs["all"]?.formats.map(\.format) == EncoderSettings.Format.allCases.map(\.rawValue))
        let schema = try directory.write(Data(try CommandRunner.run(["schema", "--manifest"]).standardOutput.utf8), to: "schema.json")
        #expect(try SchemaValidator.errorCounts(schema: schema, documents: [directory.path + "/public/manifest.json"]) == [0])
    }

    @Test func htmlPrintsAPictureElementFromTheManifest() throws {
        let directory = try prepare()
        #expect(try run(directory).status == 0)
        let result = try CommandRunner.run([
            "html", manifestPath(directory).path, "c.jpg", "--output", "hero",
            "--sizes", "(max-width: 600px) 100vw, 50vw", "--alt", "A \"gradient\"",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let html = result.standardOutput
        #expect(html.hasPrefix("<picture>\n") && html.hasSuffix("</picture>\n"))
        #expect(html.contains(#"src="/img/c-hero.webp""#) && html.contains(#"srcset="/img/c-hero.webp 400w""#))
        #expect(html.contains(#"width="400" height="667""#))
        #expect(html.contains(#"sizes="(max-width: 600px) 100vw, 50vw""#))
        #expect(html.contains(#"alt="A &quot;gradient&quot;""#))
        #expect(html.contains(#"loading="lazy" decoding="async""#))
        #expect(html.contains("background-image: url(data:image/webp;base64,"))

        let missing = try CommandRunner.run(["html", manifestPath(directory).path, "nowhere.jpg"])
        #expect(missing.status == 2 && missing.standardError.contains("no input \"nowhere.jpg\""))
    }

    @Test func htmlPutsNoPlaceholderBehindATransparentImage() throws {
        // Given a red disc on transparency (a logo) and a photo saved with an opaque alpha band,
        // made with an LQIP and a dominant colour
        let directory = try TemporaryDirectory()
        let logo = try Fixtures.image(width: 120, height: 120, bands: 4) { x, y in
            (x - 60) * (x - 60) + (y - 60) * (y - 60) < 40 * 40 ? [220, 30, 30, 255] : [0, 0, 0, 0]
        }
        try directory.write(try Fixtures.png(logo), to: "art/logo.png")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 120, height: 80, bands: 4)), to: "art/photo.png")
        try directory.write(
            Data(
                """
                {"version": 1, "name": "art", "inputs": ["art/*.png"],
                 "manifest": {"path": "out/manifest.json", "urlPrefix": "/img/"},
                 "outputs": [{"name": "web", "encode": {"format": "webp"}, "path": "out/{stem}.webp",
                              "placeholders": ["lqip", "dominantColor"]}]}
                """.utf8), to: "art.json")
        let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("art.json").path])
        #expect(run.status == 0, "\(run.standardError)")
        // Then the logo's placeholders say it is transparent, and its <img> has no background,
        // while the photo's has its LQIP
        let manifestPath = directory.url.appendingPathComponent("out/manifest.json")
        let manifest = try ImageManifest.read(from: manifestPath)
        #expect(manifest.input("art/logo.png")?.outputs["web"]?.placeholders?.transparent == true)
        #expect(manifest.input("art/photo.png")?.outputs["web"]?.placeholders?.transparent == nil)
        let logoHTML = try CommandRunner.run(["html", manifestPath.path, "logo.png"])
        #expect(logoHTML.status == 0 && logoHTML.standardOutput.contains("<img "), "\(logoHTML.standardError)")
        #expect(!logoHTML.standardOutput.contains("style="), "\(logoHTML.standardOutput)")
        let photoHTML = try CommandRunner.run(["html", manifestPath.path, "photo.png"])
        #expect(photoHTML.standardOutput.contains("background-image: url(data:image/webp;base64,"), "\(photoHTML.standardOutput)")
    }

    @Test func htmlRefusesANameThatEndsSeveralInputsAndListsThem() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 120, height: 80)), to: "coll/a/x.png")
        try directory.write(try Fixtures.png(try Fixtures.redCorner(width: 90, height: 60)), to: "coll/b/x.png")
        try directory.write(
            Data(
                """
                {"version": 1, "name": "coll", "inputs": ["coll/**/*.png"],
                 "manifest": {"path": "out/manifest.json", "urlPrefix": "/img/"},
                 "outputs": [{"name": "web", "encode": {"format": "webp"}, "path": "out/{dir}/{stem}.webp"}]}
                """.utf8), to: "coll.json")
        let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("coll.json").path])
        #expect(run.status == 0, "\(run.standardError)")
        let manifest = directory.url.appendingPathComponent("out/manifest.json").path

        let ambiguous = try CommandRunner.run(["html", manifest, "x.png"])
        #expect(ambiguous.status == 2)
        #expect(ambiguous.standardOutput.isEmpty)
        #expect(ambiguous.standardError.contains("\"x.png\" is ambiguous"), "\(ambiguous.standardError)")
        #expect(ambiguous.standardError.contains("coll/a/x.png") && ambiguous.standardError.contains("coll/b/x.png"))

        // A full path, or a longer end of one, picks one
        let full = try CommandRunner.run(["html", manifest, "coll/b/x.png"])
        #expect(full.status == 0, "\(full.standardError)")
        #expect(full.standardOutput.contains(#"src="/img/b/x.webp""#) && full.standardOutput.contains(#"width="90""#))
        let end = try CommandRunner.run(["html", manifest, "a/x.png"])
        #expect(end.status == 0 && end.standardOutput.contains(#"src="/img/a/x.webp""#), "\(end.standardError)")
    }

    @Test func aRunWritesEncodedURLsAndKeepsFileNamesOnDisk() throws {
        let directory = try TemporaryDirectory()
        for name in ["with space.jpg", "q?x#y%20.jpg", "café.jpg"] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "photos/\(name)")
        }
        try directory.write(
            Data(
                """
                {"version": 1, "name": "site", "inputs": ["photos/*.jpg"],
                 "manifest": {"path": "public/img/manifest.json", "urlPrefix": "/img/"},
                 "outputs": [{"name": "web", "encode": {"format": "webp"}, "widths": [100, 200], "path": "public/img/{stem}-{width}.webp"}]}
                """.utf8), to: "site.json")
        let run = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("site.json").path])
        #expect(run.status == 0, "\(run.standardError)")
        let manifest = try ImageManifest.read(from: manifestPath(directory))
        let expected = ["with space": "with%20space", "q?x#y%20": "q%3Fx%23y%2520", "café": "caf%C3%A9"]
        for (stem, encoded) in expected {
            let entry = try #require(manifest.input("photos/\(stem).jpg"))
            let files = try #require(entry.outputs["web"]?.formats.first?.files)
            #expect(files.map(\.path) == ["\(stem)-100.webp", "\(stem)-200.webp"])
            #expect(files.map(\.url) == ["/img/\(encoded)-100.webp", "/img/\(encoded)-200.webp"])
            for file in files {
                #expect(
                    FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("public/img/\(file.path)").path),
                    "\(file.path)")
            }
            let html = try CommandRunner.run(["html", manifestPath(directory).path, "\(stem).jpg"])
            #expect(html.status == 0, "\(html.standardError)")
            #expect(
                html.standardOutput.contains("srcset=\"/img/\(encoded)-100.webp 100w, /img/\(encoded)-200.webp 200w\""),
                "\(html.standardOutput)")
        }
    }
}
