#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `?width=original` is the file at the image's own width, which in a set that enlarges need
/// not be the widest; without a width, the widest file made, as a manifest's fallback names it.
@Suite(.serialized) struct ServeOriginalWidthTests {
    /// An enlarging output's JSON: `widths` (as JSON), webp files under `out/NAME/`, the path
    /// ending in `suffix` (a `{hash}`, say).
    static func enlarging(_ name: String, widths: String, suffix: String = "") -> String {
        #"{"name": "\#(name)", "widths": \#(widths), "encode": {"format": "webp"}, "steps": [{"resize": {"withoutEnlargement": false}}], "path": "out/\#(name)/{stem}-{width}\#(suffix).webp"}"#
    }

    @Test(arguments: [false, true])
    func originalInASetThatEnlargesIsTheImagesOwnWidthNotTheWidest(makeAll: Bool) async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        // Given two sets that enlarge the 48-pixel photo to 96, one with a width equal to its own
        let equal = Self.enlarging("equal", widths: #"[16, 48, 96, "original"]"#)
        let other = Self.enlarging("other", widths: #"[16, 96, "original"]"#)
        let serve = makeAll ? #""serve": {"makeAll": true}"# : ""
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [equal, other], extra: serve)
        try await withServer(json, in: directory) { server in
            for output in ["equal", "other"] {
                // When the enlarged width is made first, then "original" is asked for
                let enlarged = try await server.request("/\(output)/a.jpg?width=96")
                #expect(try VipsImage.open(data: enlarged.body).width == 96)
                let original = try await server.request("/\(output)/a.jpg?width=original")
                // Then "original" is the photo's own width
                #expect(original.status == 200)
                #expect(try VipsImage.open(data: original.body).width == 48, "\(output)")
                #expect(original.header("ETag") != enlarged.header("ETag"))
                // And no width is the widest, the enlarged file a manifest names as the fallback
                let unasked = try await server.request("/\(output)/a.jpg")
                #expect(try VipsImage.open(data: unasked.body).width == 96, "\(output)")
                #expect(unasked.header("X-Pipeline-Source") == "disk")
                #expect(unasked.header("ETag") == enlarged.header("ETag"))
            }
        }
        // And a batch run then makes only the 16-pixel files, unless every file was made
        let batch = try await PipelineHarness.run(json, in: directory)
        #expect(batch.summary.outputsWritten == (makeAll ? 0 : 2))
        #expect(batch.summary.outputsUpToDate == (makeAll ? 6 : 4))
    }

    @Test func aHashWithoutAWidthNamesTheWidestFileAsTheManifestsFallbackDoes() async throws {
        // Given an enlarging set named by hash, made by a batch run
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [Self.enlarging("h", widths: #"[16, 96, "original"]"#, suffix: ".{hash:10}")],
            extra: #""manifest": {"path": "site/images.json"}"#)
        _ = try await PipelineHarness.run(json, in: directory)
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("site/images.json"))
        let fallback = try #require(manifest.inputs.first?.outputs["h"]?.fallback)
        #expect(fallback.width == 96)
        let hash = try #require(fallback.path.split(separator: ".").dropLast().last.map(String.init))

        try await withServer(json, in: directory) { server in
            // When the fallback's hash is asked for without a width
            let named = try await server.request("/h/a.jpg?hash=\(hash)")
            // Then that file answers, for good
            #expect(named.status == 200, "\(String(decoding: named.body, as: UTF8.self))")
            #expect(try VipsImage.open(data: named.body).width == 96)
            #expect(named.header("Cache-Control") == OutputResponder.immutable)
            // And asked for without a hash, the same file names its URL by its width, and
            // "original" by "original"
            let plain = try await server.request("/h/a.jpg")
            #expect(plain.header("Content-Location") == "/h/a.jpg?width=96&format=webp&hash=\(hash)")
            let original = try await server.request("/h/a.jpg?width=original")
            #expect(try VipsImage.open(data: original.body).width == 48)
            #expect(original.header("Content-Location")?.hasPrefix("/h/a.jpg?width=original&format=webp&hash=") == true)
        }
    }

    @Test func everyWidthNamingATrimmedImagesOwnFileAnswersItUnderOneTagAfterARestartToo() async throws {
        // Given a trimmed set (80 px once trimmed) listing "original", the width equal to the
        // trimmed image's, and one above it
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.boxedPNG(), to: "in/box.png")
        let json = Fixtures.trimmedSetJSON(widths: #"[40, 80, 640, "original"]"#, enlarges: false, path: "out/{stem}-{width}.png")
        // When each of the three is asked for in turn
        let tags = try await withServer(json, in: directory) { server in
            var tags: [String?] = []
            for width in ["original", "80", "640"] {
                let answer = try await server.request("/t/box.png?width=\(width)")
                #expect(try VipsImage.open(data: answer.body).width == 80, "\(width)")
                tags.append(answer.header("ETag"))
            }
            return tags
        }
        // Then all three answer one file under one tag
        #expect(tags[0] != nil)
        #expect(Set(tags).count == 1, "\(tags)")
        // And a server started afresh still says it is unchanged
        try await withServer(json, in: directory) { server in
            for width in ["original", "80", "640"] {
                let again = try await server.request("/t/box.png?width=\(width)", headers: ["If-None-Match": tags[0] ?? ""])
                #expect(again.status == 304, "\(width)")
            }
        }
    }

    @Test func anOutputOfOriginalAloneAnswersWidthOriginal() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.enlarging("o", widths: #"["original"]"#)])
        try await withServer(json, in: directory) { server in
            // When an output listing "original" alone is asked for it, and for another width
            let original = try await server.request("/o/a.jpg?width=original")
            let other = try await server.request("/o/a.jpg?width=16")
            // Then "original" is the photo's own width, and another width is refused naming it
            #expect(original.status == 200, "\(String(decoding: original.body, as: UTF8.self))")
            #expect(try VipsImage.open(data: original.body).width == 48)
            #expect(other.status == 400)
            #expect(String(decoding: other.body, as: UTF8.self).contains("its widths are original"))
        }
    }
}
#endif
