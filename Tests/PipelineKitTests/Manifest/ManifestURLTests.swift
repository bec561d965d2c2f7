import Foundation
import Testing
import Vips

@testable import PipelineKit

/// The URLs a manifest holds: each path segment percent-encoded, in every srcset and src.
@Suite struct ManifestURLTests {
    @Test func fileURLsArePercentEncodedSegmentBySegment() {
        #expect(ImageManifest.File.url(prefix: "/img/", path: "with space-200.webp") == "/img/with%20space-200.webp")
        #expect(ImageManifest.File.url(prefix: "/img/", path: "q?x#y%20-200.webp") == "/img/q%3Fx%23y%2520-200.webp")
        #expect(ImageManifest.File.url(prefix: "/img/", path: "sub dir/é,1.webp") == "/img/sub%20dir/%C3%A9%2C1.webp")
        #expect(ImageManifest.File.url(prefix: "", path: "../up/a-b_c.~d.webp") == "../up/a-b_c.~d.webp")
        // A prefix names a folder, with its slash or without
        #expect(ImageManifest.File.url(prefix: "/img", path: "a-200.webp") == "/img/a-200.webp")
        #expect(ImageManifest.File.url(prefix: "https://cdn.example.com", path: "a.webp") == "https://cdn.example.com/a.webp")
        // The prefix keeps its scheme, port, separators and escapes; only what no URI may hold is encoded
        #expect(
            ImageManifest.File.url(prefix: "https://cdn.example.com:8443/a%20b/my pics/", path: "x.webp")
                == "https://cdn.example.com:8443/a%20b/my%20pics/x.webp")
    }

    @Test func markupCarriesTheEncodedURLsInEverySrcsetAndSrc() {
        func file(_ name: String, _ width: Int, _ format: String) -> ImageManifest.File {
            ImageManifest.File(
                url: ImageManifest.File.url(prefix: "/img/", path: name), path: name, width: width, height: width / 2,
                bytes: 100, format: format, mimeType: "image/\(format)")
        }
        let output = ImageManifest.Output(
            formats: [
                ImageManifest.Format(
                    format: "avif", mimeType: "image/avif",
                    files: [file("q?x#y%20-200.avif", 200, "avif"), file("q?x#y%20-400.avif", 400, "avif")]),
                ImageManifest.Format(
                    format: "webp", mimeType: "image/webp",
                    files: [file("with space-200.webp", 200, "webp"), file("with space-400.webp", 400, "webp")]),
            ], placeholders: nil)
        let html = PictureMarkup().html(for: output) ?? ""
        #expect(
            html.contains(#"<source type="image/avif" srcset="/img/q%3Fx%23y%2520-200.avif 200w, /img/q%3Fx%23y%2520-400.avif 400w""#),
            "\(html)")
        #expect(
            html.contains(#"src="/img/with%20space-400.webp" srcset="/img/with%20space-200.webp 200w, /img/with%20space-400.webp 400w""#),
            "\(html)")
        // Every srcset candidate is one URL and one descriptor: no space or raw ?, # inside a URL
        for srcset in html.components(separatedBy: "srcset=\"").dropFirst().map({ $0.prefix { $0 != "\"" } }) {
            for candidate in srcset.components(separatedBy: ", ") {
                let parts = candidate.split(separator: " ")
                #expect(parts.count == 2 && !parts[0].contains("?") && !parts[0].contains("#"), "\(candidate)")
            }
        }
    }

    @Test func aManifestKeptApartFromTheImagesHasURLsBelowTheFolderThePrefixServes() async throws {
        // Given a site generator's layout: the manifest in its data folder, the images in public/img, served as /img/
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 80, height: 40)), to: "photos/dune.jpg")
        func json(_ root: String) -> String {
            PipelineHarness.json(
                inputs: ["photos/*.jpg"],
                outputs: [#"{"name": "t", "widths": [40], "formats": ["webp"], "path": "public/img/{stem}-{width}.{format}"}"#],
                extra: #""manifest": {"path": "src/_data/images.json", "urlPrefix": "/img/"\#(root)}"#)
        }
        func fallback() throws -> ImageManifest.File? {
            try ImageManifest.read(from: directory.url.appendingPathComponent("src/_data/images.json")).inputs.first?.outputs["t"]?
                .fallback
        }
        // When it is made without urlRoot, each URL climbs out of /img/, and the run says so
        let (_, plain) = try await PipelineHarness.run(json(""), in: directory)
        #expect(try fallback()?.url == "/img/../../public/img/dune-40.webp")
        #expect(
            plain.warnings.contains { $0.contains("write them under it, or set manifest.urlRoot") && $0.contains("dune-40.webp") },
            "\(plain.warnings)")
        // Then with urlRoot the folder the prefix serves, the URL is the image's, and its path is still the manifest's
        let forced = try await PipelineHarness.pipeline(json(#", "urlRoot": "public/img""#), in: directory).run(force: true).collect()
        let rooted = forced.summary?.warnings ?? ["no summary"]
        #expect(try fallback()?.url == "/img/dune-40.webp")
        #expect(try fallback()?.path == "../../public/img/dune-40.webp")
        #expect(rooted.isEmpty, "\(rooted)")
    }
}
