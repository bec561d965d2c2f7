#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `PipelineServer`'s signed URLs, as imgproxy signs them.
@Suite(.serialized) struct SignedURLTests {
    @Test func signaturesAreImgproxys() throws {
        // imgproxy's own documented example: key "secret", salt "hello", in hex
        let signing = try #require(
            ServeSettings.Signing.bytes(hex: "736563726574").flatMap { key in
                ServeSettings.Signing.bytes(hex: "68656C6C6F").map { ServeSettings.Signing(key: key, salt: $0) }
            })
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        let signature = URLSignature(signing)
        #expect(signature.signature(of: path) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(signature.verified("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" + path) == path)
        #expect(signature.verified("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9" + path) == nil)
        #expect(signature.verified("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8=" + path) == nil)
        #expect(signature.verified(path) == nil)
        #expect(ServeSettings.Signing.bytes(hex: "0g") == nil)
        #expect(ServeSettings.Signing.bytes(hex: "abc") == nil)
        #expect(ServeSettings.Signing.bytes(hex: "0aFf") == [0x0A, 0xFF])
    }

    @Test func aFileWithAKeyAnswersOnlySignedPaths() async throws {
        let directory = try ServeTests.folder()
        // Signatures computed apart from this code (Python's hmac) for this key and salt.
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: [ServeTests.thumb],
            extra: #""serve": {"key": "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", "#
                + #""salt": "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"}"#)
        let signedA = "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/a.jpg"
        let signedB = "/k-beSUVKoYfW9yX3TuuinxIV22Rx7SKCpxFDX88MQto/thumb/sub/b.jpg"
        try await withServer(json, in: directory) { server in
            #expect(try await server.request(signedA).status == 200)
            #expect(try await server.request(signedB + "?format=webp").status == 200)
            let refused = [
                "/thumb/a.jpg", "/k-beSUVKoYfW9yX3TuuinxIV22Rx7SKCpxFDX88MQto/thumb/a.jpg",
                "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/sub/b.jpg",
                "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0=/thumb/a.jpg", "/%%%/thumb/a.jpg", "/insecure/thumb/a.jpg",
                "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/../a.jpg",
            ]
            for target in refused {
                let response = try await server.request(target)
                #expect(response.status == 403, "\(target)")
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                #expect(body?["error"]?.isEmpty == false, "\(target)")
            }
            #expect(try await server.request("/healthz").status == 200)
        }
    }

    @Test func aKeyNeedsASaltAndBothAreHex() throws {
        let directory = try ServeTests.folder()
        let cases = [
            (#"{"key": "00ff"}"#, "serve.salt"), (#"{"salt": "00ff"}"#, "serve.key"),
            (#"{"key": "secret", "salt": "00ff"}"#, "serve.key"), (#"{"key": "00ff", "salt": "abc"}"#, "serve.salt"),
        ]
        for (serve, path) in cases {
            let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [ServeTests.thumb], extra: #""serve": "# + serve)
            let error = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory) }
            #expect(error?.problems.contains { $0.path == path } == true, "\(serve): \(String(describing: error))")
        }
    }
}
#endif
