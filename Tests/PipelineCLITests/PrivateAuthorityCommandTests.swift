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

    /// An S3 endpoint with a private authority is trusted by `AWS_CA_BUNDLE` in a run, as the AWS
    /// command line trusts it, with `SSL_CERT_FILE` and `CURL_CA_BUNDLE` empty.
    @Test func awsCABundleTrustsAPrivateS3EndpointInARun() throws {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80))
        let origin = try TLSOrigin(files: ["photos/photo.jpg": photo])
        let directory = try TemporaryDirectory()
        let json = """
            {"version": 1, "inputs": ["s3://photos/photo.jpg"], "cache": {"directory": "cache"},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": 60}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        let environment = [
            "AWS_CA_BUNDLE": origin.authorityFile, "SSL_CERT_FILE": "", "CURL_CA_BUNDLE": "", "SSL_CERT_DIR": "",
            "AWS_ACCESS_KEY_ID": "AKIAPRIVATEPRIVATE01", "AWS_SECRET_ACCESS_KEY": "privateSecret", "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": "https://127.0.0.1:\(origin.port)", "HOME": directory.path,
        ]
        let result = try CommandRunner.run(["run", file], environment: environment)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo.webp"))
    }
}
