#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit
@testable import PipelineServer

/// `?expires=N` in a signed URL: signed after the path, and refused once past.
@Suite struct ExpiringSignatureTests {
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let json = PipelineHarness.json(
        inputs: ["in/**/*.jpg"], outputs: [ServeTests.thumb], extra: #""serve": {"key": "\#(key)", "salt": "\#(salt)"}"#)
    // Computed apart from this code (Python's hmac) over the path, then `?expires=N`.
    static let until2100 = "/ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s/thumb/a.jpg?expires=4102444800"
    static let until2001 = "/YSn-MUJ6CeBC1Xd9IuH7lc0p-e6DI1FOIeo4nwjovBQ/thumb/a.jpg?expires=1000000000"
    static let forever = "/9g2ieukFJaYLzawA8dyjVIIjoUfhd8vSogGVo4l80a0/thumb/a.jpg"

    @Test func expiresIsSignedAfterThePath() throws {
        let signing = try #require(
            ServeSettings.Signing.bytes(hex: Self.key).flatMap { key in
                ServeSettings.Signing.bytes(hex: Self.salt).map { ServeSettings.Signing(key: key, salt: $0) }
            })
        let signature = URLSignature(signing)
        #expect(signature.signature(of: "/thumb/a.jpg", expires: 4_102_444_800) == "ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s")
        let path = "/ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s/thumb/a.jpg"
        #expect(signature.verified(path, expires: "4102444800") == "/thumb/a.jpg")
        #expect(signature.verified(path, expires: "4102444801") == nil)
        #expect(signature.verified(path) == nil)
        #expect(signature.verified(Self.forever, expires: "4102444800") == nil)
        #expect(URLSignature.expiries(inQuery: "width=16&expires=12&expires=13") == ["12", "13"])
    }

    @Test func aServerRefusesExpiredAndAddedExpiries() async throws {
        let directory = try ServeTests.folder()
        try await withServer(Self.json, in: directory) { server in
            #expect(try await server.request(Self.until2100).status == 200)
            #expect(try await server.request(Self.until2100 + "&width=16").status == 400)  // it lists no widths
            #expect(try await server.request(Self.forever).status == 200)
            for (target, reason) in [
                (Self.until2001, "the URL expired"), (Self.forever + "?expires=4102444800", "the URL's signature is missing or wrong"),
                (
                    Self.until2100.replacingOccurrences(of: "expires=4102444800", with: "expires=4102444801"),
                    "the URL's signature is missing or wrong"
                ),
                (Self.until2100 + "&expires=4102444800", "the URL has more than one expires"),
                ("/ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s/thumb/a.jpg", "the URL's signature is missing or wrong"),
            ] {
                let response = try await server.request(target)
                #expect(response.status == 403, "\(target)")
                #expect(response.header("Content-Type") == "application/json")
                let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
                #expect(body?["error"] == reason, "\(target)")
            }
        }
    }
}
#endif
