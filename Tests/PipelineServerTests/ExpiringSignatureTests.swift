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

    static func signature() throws -> URLSignature {
        let signing = try #require(
            ServeSettings.Signing.bytes(hex: Self.key).flatMap { key in
                ServeSettings.Signing.bytes(hex: Self.salt).map { ServeSettings.Signing(key: key, salt: $0) }
            })
        return URLSignature(signing)
    }

    @Test func expiresIsSignedAfterThePath() throws {
        let signature = try Self.signature()
        #expect(signature.signature(of: "/thumb/a.jpg", expires: 4_102_444_800) == "ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s")
        let path = "/ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s/thumb/a.jpg"
        #expect(signature.verified(path, expires: "4102444800") == "/thumb/a.jpg")
        #expect(signature.verified(path, expires: "4102444801") == nil)
        #expect(signature.verified(path) == nil)
        #expect(signature.verified(Self.forever, expires: "4102444800") == nil)
        #expect(URLSignature.expiries(inQuery: "width=16&expires=12&expires=13") == ["12", "13"])
        // A name spelt with a percent escape, or without a value, is an expires too
        #expect(URLSignature.expiries(inQuery: "%65xpires=12&expires&expiresx=1&expires=") == ["12", "", ""])
        #expect(signature.verified(path, expires: "") == nil)
    }

    @Test func aServerRefusesExpiredAndAddedExpiries() async throws {
        let directory = try ServeTests.folder()
        try await withServer(Self.json, in: directory) { server in
            let until2100 = try await server.request(Self.until2100)
            #expect(until2100.status == 200)
            // A URL that expires generations away is kept a year, as files named by a hash are
            #expect(until2100.header("Cache-Control") == "max-age=31536000, must-revalidate")
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

    @Test func theAccessLogShowsNoSignatureWhereverItStands() throws {
        let signature = try Self.signature().signature(of: "/thumb/a.jpg")
        #expect(AccessMiddleware.loggedPath("/\(signature)/thumb/a.jpg", signed: true) == "/_/thumb/a.jpg")
        // A signature joined twice, or sent percent-encoded, is hidden as well
        let escaped = "%" + String(format: "%02X", signature.utf8.first ?? 0) + signature.dropFirst()
        #expect(AccessMiddleware.loggedPath("/x/\(signature)/\(escaped)/a.jpg", signed: true) == "/x/_/_/a.jpg")
        // and so is one spelled otherwise, that a signature check refuses but that gives away
        // the signature all the same: padded, a character more, standard base64, in a name
        let standard = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "%2F")
        for spelled in [signature + "=", signature + "%3D%3D", signature + ".", "x" + signature, standard, escaped + "%FF"] {
            #expect(AccessMiddleware.loggedPath("/\(spelled)/thumb/a.jpg", signed: true) == "/_/thumb/a.jpg", "\(spelled)")
        }
        // A signature in standard base64 with a `/` as sent, not escaped, spans two parts or
        // more: they are one signature (about half of all signatures hold a `_`)
        let slashed = try (0..<40).map { try Self.signature().signature(of: "/thumb/\($0).jpg") }.filter { $0.contains("_") }
        #expect(slashed.count >= 5)
        for signature in slashed {
            let standard = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            for spelled in [standard, standard + "="] {
                #expect(AccessMiddleware.loggedPath("/\(spelled)/thumb/a.jpg", signed: true) == "/_/thumb/a.jpg", "\(spelled)")
            }
        }
        // wherever its `/` stands, one of its parts long enough to look like one alone
        for position in [1, 2, 3, 39, 40, 41] {
            let spelled = signature.prefix(position) + "/" + signature.dropFirst(position + 1)
            #expect(AccessMiddleware.loggedPath("/\(spelled)/thumb/a.jpg", signed: true) == "/_/thumb/a.jpg", "\(spelled)")
        }
        #expect(AccessMiddleware.loggedPath("/\(signature)/t/a.jpg", signed: true) == "/_/t/a.jpg")
        #expect(AccessMiddleware.loggedPath("/_/thumb/\(signature).jpg", signed: true) == "/_/thumb/_")
        // and an unsigned request keeps what it asked for, long names of words and numbers too
        #expect(AccessMiddleware.loggedPath("/thumb/a.jpg", signed: true) == "/thumb/a.jpg")
        let name = "sub/a-photo-of-the-beach-at-dawn-by-Ann-2024.jpg"
        #expect(AccessMiddleware.loggedPath("/_/thumb/\(name)", signed: true) == "/_/thumb/\(name)")
        #expect(AccessMiddleware.loggedPath("/\(signature)/thumb/a.jpg", signed: false) == "/\(signature)/thumb/a.jpg")
    }

    @Test func aLifetimeIsCutToTheTimeAURLHasLeft() {
        // Without serve.cacheControl, the time left is the lifetime, so that a cache choosing one of
        // its own cannot answer past it
        #expect(SignatureMiddleware.cacheControl(nil, until: 60) == "max-age=60, must-revalidate")
        #expect(
            SignatureMiddleware.cacheControl("public, max-age=31536000, immutable", until: 60) == "public, max-age=60, must-revalidate")
        #expect(
            SignatureMiddleware.cacheControl("public, max-age=30, s-maxage=600", until: 60)
                == "public, max-age=30, s-maxage=60, must-revalidate")
        #expect(SignatureMiddleware.cacheControl("no-cache", until: 60) == "no-cache")
        #expect(SignatureMiddleware.cacheControl("private, no-store", until: 60) == "private, no-store")
        // A value without a lifetime gets the time left: a cache would choose its own
        #expect(SignatureMiddleware.cacheControl("public", until: 60) == "public, max-age=60, must-revalidate")
        #expect(SignatureMiddleware.cacheControl("immutable", until: 60) == "max-age=60, must-revalidate")
        #expect(
            SignatureMiddleware.cacheControl("public, s-maxage=600, stale-while-revalidate=600", until: 60)
                == "public, s-maxage=60, max-age=60, must-revalidate")
        #expect(SignatureMiddleware.cacheControl("public, , =, max-age=", until: 60) == "public, max-age=0, must-revalidate")
        // No stale answer past the time left, whatever the file allows
        #expect(
            SignatureMiddleware.cacheControl(
                "public, max-age=86400, stale-while-revalidate=86400, Stale-If-Error=86400, must-revalidate", until: 60)
                == "public, max-age=60, must-revalidate")
    }

    @Test func anAnswerToAnExpiringURLIsCachedUntilItExpiresAndNoLonger() async throws {
        // Given signed URLs that expire in an hour, of a file cached for a day and of files named
        // by their hash
        let directory = try ServeTests.folder()
        let hashed = #"{"name": "hashed", "widths": [16], "formats": ["webp"], "path": "out/{stem}-{width}.{hash}.webp"}"#
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: [ServeTests.thumb, hashed],
            extra: #""serve": {"key": "\#(Self.key)", "salt": "\#(Self.salt)", "cacheControl": "public, max-age=86400"}"#)
        let signature = try Self.signature()
        let expires = Int(Date().timeIntervalSince1970) + 3600
        func signed(_ path: String, _ query: String = "") -> String {
            "/" + signature.signature(of: path, expires: expires) + path + "?expires=\(expires)" + query
        }
        func maxAge(_ response: LoopbackHTTPClient.Response) -> Int? {
            response.header("Cache-Control")?.split(separator: ",").lazy.compactMap { directive in
                let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=")
                return parts.count == 2 && parts[0] == "max-age" ? Int(parts[1]) : nil
            }.first
        }
        try await withServer(json, in: directory) { server in
            // Then each answer may be kept until the URL expires, and no longer (however long a
            // loaded machine took to answer)
            let thumb = try await server.request(signed("/thumb/a.jpg"))
            #expect(thumb.status == 200)
            #expect((1...3600).contains(maxAge(thumb) ?? 0), "\(thumb.header("Cache-Control") ?? "none")")
            let plain = try await server.request(signed("/hashed/a.jpg"))
            let hash = try #require(plain.header("Content-Location")?.components(separatedBy: "hash=").last)
            let named = try await server.request(signed("/hashed/a.jpg", "&width=16&format=webp&hash=\(hash)"))
            #expect(named.status == 200)
            #expect(named.header("Cache-Control")?.contains("immutable") == false, "\(named.header("Cache-Control") ?? "none")")
            #expect((1...3600).contains(maxAge(named) ?? 0), "\(named.header("Cache-Control") ?? "none")")
            // and a URL that does not expire keeps the file's own lifetime
            let forever = try await server.request("/" + signature.signature(of: "/thumb/a.jpg") + "/thumb/a.jpg")
            #expect(forever.header("Cache-Control") == "public, max-age=86400")
        }
    }
}
#endif
