import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Credentials in input URLs (userinfo, a presigned URL's signature, tokens) are sent to the
/// server and shown nowhere: no message, event, report, trace, manifest or cache entry.
@Suite struct CredentialRedactionTests {
    /// Every secret the URLs below carry.
    static let secrets = ["hunter2pass", "sigsecret1", "credsecret2", "toksecret3", "extrasecret4", "tok404secret", "pwsecret5"]

    @Test func secretsInInputURLsAppearInNoOutputAndAreStillSent() throws {
        // Given a server with one photo (cacheable), and URLs to it and to a missing file that
        // carry credentials in their userinfo and query (fetch.redactQuery, no longer needed, is
        // still accepted; showQuery lets one value show)
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80))
        let server = try TestHTTPServer { request, _ in
            guard request.path.hasPrefix("/photo-0.jpg") else { return .init(status: 404) }
            return .init(status: 200, headers: ["ETag": "\"p0\"", "Cache-Control": "max-age=3600"], body: photo)
        }
        let port = server.url("").dropFirst("http://127.0.0.1:".count)
        let urls = [
            "http://user:hunter2pass@127.0.0.1:\(port)/photo-0.jpg?X-Amz-Signature=sigsecret1&X-Amz-Credential=credsecret2"
                + "&Token=toksecret3&mySecret=extrasecret4&keep=visible",
            "http://127.0.0.1:\(port)/missing-1.jpg?token=tok404secret&password=pwsecret5",
        ]
        let directory = try TemporaryDirectory()
        let inputs = urls.map { JSONNode.quoted($0) }.joined(separator: ", ")
        let json = """
            {"version": 1, "inputs": [\(inputs)],
             "fetch": {"retries": 0, "redactQuery": ["mySecret"], "showQuery": ["keep"]},
             "cache": {"directory": "cache"},
             "manifest": {"path": "out/manifest.json"},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": 32}}], "encode": {"format": "png"}, "path": "out/{stem}.png",
                          "placeholders": ["lqip"]}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")

        // When it is validated, explained, and run (progress, verbose, --json, with a report
        // and a trace), twice so the second run reads the cache
        let texts = try Self.outputsOfEveryCommand(on: file, in: directory)
        // Then the missing one failed, naming its URL (redacted), and the photo was made
        let all = texts.map(\.1).joined(separator: "\n")
        #expect(all.contains("127.0.0.1:\(port)/missing-1.jpg?token=…&password=…"), "\(all)")
        #expect(all.contains("http://…@127.0.0.1:\(port)/photo-0.jpg?X-Amz-Signature=…"), "\(all)")
        #expect(all.contains("keep=visible"), "\(all)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo-0.png"))
        // And no secret is in any output, or in any file under the folder (outputs, manifest,
        // report, trace, cache entries, journal) but the pipeline file itself
        #expect(try Self.expectNone(of: Self.secrets, in: texts, orUnder: directory) >= 5)
        // And the server was sent them: the query as written, the userinfo as Basic authorization
        let sent = server.requests
        #expect(sent.contains { $0.path.contains("X-Amz-Signature=sigsecret1") && $0.path.contains("mySecret=extrasecret4") })
        #expect(sent.contains { $0.path.contains("token=tok404secret") })
        let basic = "Basic " + Data("user:hunter2pass".utf8).base64EncodedString()
        #expect(sent.contains { $0.headers["authorization"] == basic }, "\(sent.map(\.headers))")
    }

    @Test func secretsInAnOverlayURLAppearInNoOutputAndAreStillSent() throws {
        // Given a local photo, and a composite overlay whose URL carries a password and a
        // signature, on a server that answers 404
        let server = try TestHTTPServer { _, _ in .init(status: 404) }
        let port = server.url("").dropFirst("http://127.0.0.1:".count)
        let secrets = ["overlaypass7", "overlaysig8"]
        let overlay = "http://alice:overlaypass7@127.0.0.1:\(port)/missing.png?sig=overlaysig8"
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80)), to: "photo.jpg")
        let composite = #"{"composite": {"image": \#(JSONNode.quoted(overlay))}}"#
        let json = """
            {"version": 1, "inputs": ["photo.jpg"], "fetch": {"retries": 0}, "cache": {"directory": "cache"},
             "outputs": [{"name": "marked", "steps": [{"resize": {"width": 32}}, \(composite)], "encode": {"format": "png"},
                          "path": "out/{stem}.png"},
                         {"name": "set", "widths": [24, 32], "formats": ["png"], "steps": [\(composite)], "path": "out/{stem}-{width}.png"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")

        // When it is validated, explained, and run (progress, verbose, --json, with a report and a trace)
        let texts = try Self.outputsOfEveryCommand(on: file, in: directory)

        // Then explain and the failures name the overlay with its credentials hidden
        let shown = "http://…@127.0.0.1:\(port)/missing.png?sig=…"
        let explained = texts.first { $0.0 == "explain stdout" }?.1 ?? ""
        #expect(explained.contains("composite(image:\(shown),gravity:"), "\(explained)")
        let all = texts.map(\.1).joined(separator: "\n")
        #expect(all.contains("cannot load \(shown): HTTP 404"), "\(all)")
        let report = try String(contentsOfFile: directory.path + "/report/report.json", encoding: .utf8)
        #expect(report.contains("missing.png?sig=…"), "\(report)")
        // And no secret is in any output or file
        #expect(try Self.expectNone(of: secrets, in: texts, orUnder: directory) >= 3)
        // And the server was sent them
        let basic = "Basic " + Data("alice:overlaypass7".utf8).base64EncodedString()
        #expect(server.requests.contains { $0.path.contains("sig=overlaysig8") && $0.headers["authorization"] == basic })
    }

    /// What `validate`, `explain`, and `run` of `file` (progress, verbose, with a report and a
    /// trace in `directory`, then `--json` again by force) print, by command and stream.
    static func outputsOfEveryCommand(on file: String, in directory: TemporaryDirectory) throws -> [(String, String)] {
        var texts: [(String, String)] = []
        for arguments in [
            ["validate", file], ["explain", file],
            ["run", "-v", "--report", directory.path + "/report", "--trace", directory.path + "/trace.json", file],
            ["run", "--json", "--force", file],
        ] {
            let result = try CommandRunner.run(arguments)
            texts.append(("\(arguments[0]) stdout", result.standardOutput))
            texts.append(("\(arguments[0]) stderr", result.standardError))
        }
        return texts
    }

    /// Expects none of `secrets` in `texts`, nor in any file under `directory` but the pipeline
    /// file itself; returns how many files it read.
    static func expectNone(of secrets: [String], in texts: [(String, String)], orUnder directory: TemporaryDirectory) throws -> Int {
        for (name, text) in texts {
            for secret in secrets { #expect(!text.contains(secret), "\(secret) in \(name): \(text)") }
        }
        let walker = try #require(FileManager.default.enumerator(atPath: directory.path))
        var checked = 0
        for case let relative as String in walker where relative != "pipeline.json" {
            guard let data = FileManager.default.contents(atPath: directory.path + "/" + relative) else { continue }
            checked += 1
            for secret in secrets {
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in \(relative)")
            }
        }
        return checked
    }
}
