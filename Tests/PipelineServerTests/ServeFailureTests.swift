#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit
@testable import PipelineServer

/// What a refused request's body says: the input as its URL named it, never a path on the server;
/// and an input that changed while it was read is to be tried again, not refused.
@Suite struct ServeFailureTests {
    static let input = InputFile(path: "/srv/images/in/sub/b.jpg", displayName: "in/sub/b.jpg", subfolder: "sub")

    static func refusal(_ kind: ItemError.Kind, _ reason: String, output: String? = nil) -> ServeError {
        OutputResponder.refusal(for: ItemError(kind, stage: .decompress, reason: reason), output: output, of: input, as: "sub/b.jpg")
    }

    @Test func reasonsNameTheInputAsTheURLDid() {
        let refused = Self.refusal(
            .undecodable, "/srv/images/in/sub/b.jpg: VipsJpeg: /proc/self/fd/9: Not a JPEG file (in/sub/b.jpg, image/png, 1/2)")
        #expect(refused.status.code == 422)
        #expect(refused.reason == "decompress: sub/b.jpg: VipsJpeg: sub/b.jpg: Not a JPEG file (sub/b.jpg, image/png, 1/2)")
        // A failure of the server's own says which output, and no path
        let unwritten = Self.refusal(.writing, "cannot write /srv/images/out/sub/b.webp: Permission denied", output: "thumb")
        #expect(unwritten.status.code == 500)
        #expect(unwritten.reason == "decompress: the server could not store output thumb of sub/b.jpg")
        // and the whole error is for the log
        #expect(unwritten.cause == "cannot write /srv/images/out/sub/b.webp: Permission denied")
        #expect(refused.cause == nil)
        // Another file a step reads (an overlay) is named by its file name, not as the input
        let overlay = Self.refusal(
            .processing, "cannot load /srv/site/overlay.png: cannot read /srv/site/overlay.png: No such file or directory")
        #expect(overlay.reason == "decompress: sub/b.jpg: cannot load overlay.png: cannot read overlay.png: No such file or directory")
        // An overlay that cannot be loaded is the server's failure, not the input's
        let url = URL(fileURLWithPath: "/srv/site/overlay.png")
        let unloaded = OutputResponder.refusal(
            for: ItemError(
                .processing, stage: .process, reason: "cannot load /srv/site/overlay.png: no such file",
                underlying: ResourceError(url: url, reason: "no such file")),
            output: "thumb", of: Self.input, as: "sub/b.jpg")
        #expect(unloaded.status.code == 500)
        #expect(unloaded.reason == "process: the server could not make output thumb of sub/b.jpg: cannot load overlay.png: no such file")
        #expect(unloaded.cause == "cannot load /srv/site/overlay.png: no such file")
        // and libvips' temporary file of the input's decode as the input
        #expect(Self.refusal(.undecodable, "read error in /tmp/vips-0-1234.v").reason == "decompress: read error in sub/b.jpg")
    }

    @Test func anObjectInABucketIsNamedAsTheURLDidWithoutItsBucketOrKey() {
        // Given an input in a bucket, gone since it was listed
        let input = InputFile(url: "s3://photos/in/sub/c.jpg")
        let reason =
            #"S3 GetObject of s3://photos/in/sub/c.jpg (bucket "photos", key "in/sub/c.jpg"): NoSuchKey (HTTP 404): The specified key does not exist."#
        let refused = OutputResponder.refusal(for: ItemError(.network, stage: .fetch, reason: reason), of: input, as: "sub/c.jpg")
        #expect(refused.reason == "fetch: S3 GetObject of sub/c.jpg: NoSuchKey (HTTP 404): The specified key does not exist.")
        // and another object (an overlay in a bucket) by its file name
        let overlay = OutputResponder.naming(
            #"cannot load s3://assets/marks/logo.png (bucket "assets", key "marks/logo.png")"#, input: input, as: "sub/c.jpg")
        #expect(overlay == "cannot load logo.png")
    }

    @Test func aBucketOutOfReachIsToBeTriedAgainWithoutItsName() {
        let reason = #"S3 PutObject of s3://site/thumbs/b.webp (bucket "site", key "thumbs/b.webp"): Couldn't connect to server"#
        let unstored = OutputResponder.refusal(
            for: ItemError(.network, stage: .encode, reason: reason), output: "thumb", of: Self.input, as: "sub/b.jpg")
        #expect(unstored.status.code == 503)
        #expect(unstored.headers[.retryAfter] == "1")
        #expect(unstored.reason == "encode: the server could not store output thumb of sub/b.jpg; try again")
        #expect(unstored.cause == reason)
        // A bucket that refuses the object (gone, or the key's secret wrong) is the server's to
        // mend: said as storing it, not making it, without S3's words
        let refusedReason = #"S3 PutObject of s3://site/thumbs/b.webp (bucket "site", key "thumbs/b.webp"): NoSuchBucket (HTTP 404)"#
        let refused = OutputResponder.refusal(
            for: ItemError(.writing, stage: .encode, reason: refusedReason), output: "thumb", of: Self.input, as: "sub/b.jpg")
        #expect(refused.status.code == 500)
        #expect(refused.reason == "encode: the server could not store output thumb of sub/b.jpg")
        #expect(refused.cause == refusedReason)
        // A remote input out of reach is still the origin's failure
        let unfetched = OutputResponder.refusal(
            for: ItemError(.network, stage: .fetch, reason: "cannot fetch: Couldn't connect to server"), of: Self.input, as: "sub/b.jpg")
        #expect(unfetched.status.code == 502)
    }

    @Test func anInputGoneSinceItWasListedIsToBeTriedAgainNotRefusedAsNoImage() {
        // Given a local input removed (or moved away, to come back) after the listing
        let gone = ItemError.system(.unreadable, stage: .fetch, "cannot read /srv/images/in/sub/b.jpg", code: ENOENT)
        let refused = OutputResponder.refusal(for: gone, output: "thumb", of: Self.input, as: "sub/b.jpg")
        // Then it is 503, to be asked again, naming no path; not 422, for which a fallback stands in
        #expect(refused.status.code == 503)
        #expect(refused.headers[.retryAfter] == "1")
        #expect(refused.reason == "fetch: sub/b.jpg is not there now; try again")
        // while one that cannot be read for another reason is still the input's fault
        let forbidden = ItemError.system(.unreadable, stage: .fetch, "cannot read /srv/images/in/sub/b.jpg", code: EACCES)
        #expect(OutputResponder.refusal(for: forbidden, of: Self.input, as: "sub/b.jpg").status.code == 422)
    }

    @Test func anInputThatChangedWhileItWasReadIsToBeTriedAgain() {
        let changed = Self.refusal(
            .changed,
            "/srv/images/in/sub/b.jpg changed while it was being read: nothing was made from it, and the next run makes it from the new version"
        )
        #expect(changed.status.code == 503)
        #expect(changed.headers[.retryAfter] == "1")
        #expect(changed.reason == "decompress: sub/b.jpg changed while it was being read; try again")
    }

    @Test func anOverlayRemovedWhileServingIs500WithNoFallbackInItsPlace() async throws {
        // Given a server whose output lays an overlay over each input, with a fallback image
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "logo.png")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 4, height: 4)), to: "fallback.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "marked", "steps": [{"composite": {"image": "logo.png"}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
            ], extra: #""serve": {"fallback": "fallback.png"}"#)
        try await withServer(json, in: directory) { server in
            // When the overlay is gone by the time a file is asked for
            try FileManager.default.removeItem(atPath: directory.path + "/logo.png")
            let response = try await server.request("/marked/a.jpg")

            // Then the answer is the server's failure, naming the overlay by its file name alone,
            // and not the fallback, which stands in for inputs
            #expect(response.status == 500)
            #expect(response.header("X-Pipeline-Fallback") == nil)
            let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
            let reason = try #require(body?["error"])
            #expect(reason.hasPrefix("process: the server could not make output marked of a.jpg: cannot load logo.png"), "\(reason)")
            #expect(!reason.contains(directory.path), "\(reason)")
        }
    }

    @Test func aServerNamesARefusedInputAsItsURLDid() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("not an image at all".utf8), to: "in/sub/broken.jpg")
        let json = PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [ServeTests.thumb])
        try await withServer(json, in: directory) { server in
            let broken = try await server.request("/thumb/sub/broken.jpg")
            #expect(broken.status == 422)
            let body = try JSONSerialization.jsonObject(with: broken.body) as? [String: String]
            let reason = try #require(body?["error"])
            #expect(!reason.contains(directory.path), "\(reason)")
            #expect(!reason.contains("in/sub/broken.jpg"), "\(reason)")
            #expect(!reason.contains("/proc/"), "\(reason)")
            // as the URL wrote it, in the body's bytes too, which logs and error pages show
            #expect(reason.hasPrefix("decompress: sub/broken.jpg: "), "\(reason)")
            #expect(
                String(decoding: broken.body, as: UTF8.self).contains("sub/broken.jpg"), "\(String(decoding: broken.body, as: UTF8.self))")
        }
    }

    @Test func anInputThePlanRefusedIsAnsweredWithWhyNotAsANameNoInputHas() async throws {
        // Given an input whose only output would have a file name longer than 255 bytes
        let directory = try TemporaryDirectory()
        let name = String(repeating: "x", count: 240) + ".jpg"
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/" + name)
        let long = #"{"name": "long", "encode": {"format": "jpeg"}, "path": "out/{name}-with-a-suffix-too-long-for-a-name.jpg"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [long])
        try await withServer(json, in: directory) { server in
            // When its file and its info are asked for
            for path in ["/long/\(name)", "/info/\(name)"] {
                let response = try await server.request(path)
                // Then both are 422, saying why by the name and no path on the server
                #expect(response.status == 422, "\(path)")
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                let reason = try #require(body?["error"])
                #expect(reason.contains("more than the 255 a file or folder name may have"), "\(reason)")
                #expect(!reason.contains(directory.path), "\(reason)")
            }
            // and a name no input has is still 404
            #expect(try await server.request("/long/other.jpg").status == 404)
        }
    }
}
#endif
