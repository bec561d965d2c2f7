import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// `pipeline` with `s3://` inputs and outputs, run as a user runs it against a real
/// S3-compatible server: whatever the command prints or writes never holds a secret.
@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct S3CommandLineTests {
    @Test func aRunFromAndToS3ShowsNoSecretInOutputReportTraceOrExplain() throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.createBucket("site")
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80))
        try server.putMany([(key: "in/a.jpg", data: photo), (key: "in/b.jpg", data: photo)], bucket: "photos")
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["s3://photos/in/*.jpg", "s3://photos/in/missing.jpg"], "cache": {"directory": "cache"},
                 "outputs": [{"name": "t", "steps": [{"resize": {"width": 30}}], "encode": {"format": "png"}, "path": "s3://site/t/{stem}.png"}]}
                """.utf8), to: "pipeline.json")
        let environment = server.environment(home: directory.path)
        let secret = server.credentials.secretAccessKey

        let run = try CommandRunner.run(
            ["run", "--json", "--report", directory.path + "/report", "--trace", directory.path + "/trace.json", file],
            environment: environment)
        let explain = try CommandRunner.run(["explain", file], environment: environment)

        #expect(run.status == 1, "\(run.standardError)")  // one input is missing
        #expect(run.standardOutput.contains("NoSuchKey"))
        #expect(try server.get(bucket: "site", key: "t/a.png") != nil)
        #expect(explain.status == 0, "\(explain.standardError)")
        #expect(explain.standardOutput.contains("3"))
        let written = [
            run.standardOutput, run.standardError, explain.standardOutput, explain.standardError,
            try String(contentsOfFile: directory.path + "/report/report.json", encoding: .utf8),
            try String(contentsOfFile: directory.path + "/trace.json", encoding: .utf8),
        ]
        for text in written { #expect(!text.contains(secret)) }
    }

    @Test func anOutputBucketThatDoesNotExistIsAPlanningErrorBeforeAnyInputIsMade() throws {
        // Given a file whose second output names a bucket that does not exist
        let server = try MotoServer()
        try server.createBucket("site")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80)), to: "in/a.jpg")
        let file = try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg"], "outputs": [
                  {"name": "t", "steps": [{"resize": {"width": 30}}], "encode": {"format": "png"}, "path": "s3://site/t/{stem}.png"},
                  {"name": "u", "steps": [{"resize": {"width": 20}}], "encode": {"format": "png"}, "path": "s3://sight/u/{stem}.png"}]}
                """.utf8), to: "pipeline.json")
        let environment = server.environment(home: directory.path)

        // When it is validated, and run
        let validate = try CommandRunner.run(["validate", file], environment: environment)
        let run = try CommandRunner.run(["run", file], environment: environment)

        // Then both exit 2, naming the output's path and the bucket, and nothing was made
        for result in [validate, run] {
            #expect(result.status == 2, "\(result.standardError)")
            #expect(
                result.standardError.contains(#"outputs[1].path: the bucket "sight" does not exist at http://127.0.0.1:"#),
                "\(result.standardError)")
            #expect(!result.standardError.contains("outputs[0]"), "\(result.standardError)")
        }
        #expect(try server.get(bucket: "site", key: "t/a.png") == nil)
    }

    /// A responsive set in a bucket: the manifest names each file by its address and its URL by
    /// its key, and has the placeholders, made from a file read back from the bucket (they were
    /// left out, with a warning that the `s3://` address could not be opened as a file); a
    /// manifest path in a bucket is refused rather than written to a folder "s3:".
    @Test func aManifestNamesOutputsInABucketByAddressAndKey() throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.createBucket("site")
        try server.put(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), bucket: "photos", key: "in/one.jpg")
        let directory = try TemporaryDirectory()
        func pipeline(manifest: String) throws -> String {
            try directory.write(
                Data(
                    """
                    {"version": 1, "inputs": ["s3://photos/in/one.jpg"], "cache": {"directory": "cache"},
                     "manifest": {"path": "\(manifest)", "urlPrefix": "https://cdn.example.com/img/"},
                     "outputs": [{"name": "t", "widths": [100, 200], "formats": ["webp"], "placeholders": ["dominantColor", "blurhash"],
                                  "path": "s3://site/p/{stem}-{width}.{format}"}]}
                    """.utf8), to: "pipeline.json")
        }
        var environment = server.environment(home: directory.path)
        // Its own folder for temporary files, to see that the copies read back are removed.
        let temporary = directory.path + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        environment["TMPDIR"] = temporary

        let run = try CommandRunner.run(["run", try pipeline(manifest: "public/images.json")], environment: environment)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardError.contains("placeholders"), "\(run.standardError)")
        let manifest = try Data(contentsOf: directory.url.appendingPathComponent("public/images.json"))
        let entry = try #require(try JSONDecoder().decode(ImageManifest.self, from: manifest).inputs.first?.outputs["t"])
        let files = try #require(entry.formats.first?.files)
        #expect(files.map(\.path) == ["s3://site/p/one-100.webp", "s3://site/p/one-200.webp"])
        #expect(files.map(\.url) == ["https://cdn.example.com/img/p/one-100.webp", "https://cdn.example.com/img/p/one-200.webp"])
        #expect(try server.get(bucket: "site", key: "p/one-200.webp") != nil)
        #expect(entry.placeholders?.dominantColor?.hasPrefix("#") == true, "\(String(describing: entry.placeholders))")
        #expect(entry.placeholders?.blurhash?.isEmpty == false)
        #expect(entry.placeholdersFrom != nil)
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary)
        #expect(!left.contains { $0.hasPrefix(".placeholder") }, "\(left)")

        for command in ["validate", "run"] {
            let refused = try CommandRunner.run([command, try pipeline(manifest: "s3://site/images.json")], environment: environment)
            #expect(refused.status == 2, "\(refused.standardError)")
            #expect(refused.standardError.contains("manifest.path: the manifest is written on this machine"), "\(refused.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/s3:"))
    }

    @Test func missingCredentialsAreAPlanningErrorNamingWhereTheyWereLookedFor() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["s3://photos/in/*.jpg"],
                 "outputs": [{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
                """.utf8), to: "pipeline.json")
        let result = try CommandRunner.run(
            ["run", file],
            environment: [
                "HOME": directory.path, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
                "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_CONFIG_FILE": "",
            ])
        #expect(result.status != 0)
        #expect(result.standardError.contains("inputs[0]"))
        #expect(result.standardError.contains("no S3 credentials"))
        #expect(result.standardError.contains(directory.path + "/.aws/credentials"))
    }

    /// An output in a bucket without credentials to write it was found only at each input's
    /// upload, after its fetch, decode and encode, and `validate` said the file was valid.
    @Test func missingCredentialsForAnOutputBucketAreAPlanningErrorAtItsPath() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let file = try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg"],
                 "outputs": [{"name": "t", "widths": [16, 24], "formats": ["webp", "jpeg"], "path": "s3://site/{stem}-{width}.{format}"}]}
                """.utf8), to: "pipeline.json")
        for command in ["validate", "run"] {
            let result = try CommandRunner.run(
                [command, file],
                environment: [
                    "HOME": directory.path, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "",
                    "AWS_SESSION_TOKEN": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_CONFIG_FILE": "",
                ])
            #expect(result.status == 2, "\(command): \(result.standardError)")
            #expect(result.standardError.contains("outputs[0].path"), "\(result.standardError)")
            #expect(result.standardError.contains("no S3 credentials"), "\(result.standardError)")
            // One problem for the output's four definitions
            #expect(result.standardError.components(separatedBy: "no S3 credentials").count == 2, "\(result.standardError)")
        }
    }
}
