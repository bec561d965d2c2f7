import Foundation
import TestSupport
import Testing
import Vips

/// An https input from an origin with a private certificate authority, through the command: the
/// run names what to set, and with `SSL_CERT_FILE` set the photo is fetched and made.
@Suite struct PrivateAuthorityCommandTests {
    @Test func sslCertFileTrustsAPrivateAuthority() throws {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80))
        let origin = try TLSOrigin(files: ["photo.jpg": photo])
        let directory = try TemporaryDirectory()
        let json = """
            {"version": 1, "inputs": ["\(origin.url("photo.jpg"))"], "cache": {"directory": "cache"},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": 60}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")

        let refused = try CommandRunner.run(["run", file], environment: ["SSL_CERT_FILE": "", "CURL_CA_BUNDLE": "", "SSL_CERT_DIR": ""])
        #expect(refused.status != 0)
        let reason = "\(origin.url("photo.jpg")): fetch: the server's certificate was refused"
        #expect(refused.standardError.contains(reason), "\(refused.standardError)")
        #expect(refused.standardError.contains("set SSL_CERT_FILE"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/photo.webp"))

        // CURL_CA_BUNDLE comes first, as curl reads them: a machine may set it for everything.
        let trusted = try CommandRunner.run(["run", file], environment: ["SSL_CERT_FILE": origin.authorityFile, "CURL_CA_BUNDLE": ""])
        #expect(trusted.status == 0, "\(trusted.standardError)")
        let made = try VipsImage.open(data: Data(contentsOf: directory.url.appendingPathComponent("out/photo.webp")))
        #expect(made.width == 60 && made.height == 40)
    }
}
