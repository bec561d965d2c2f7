import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Where S3's credentials come from: a session's token, and the AWS files' profiles.
extension S3StorageTests {
    @Test func sessionCredentialsSignWithTheirToken() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.put(Self.photo, bucket: "photos", key: "a.jpg")
        let session = try server.assumeRole()
        #expect(session.sessionToken?.isEmpty == false)
        let directory = try TemporaryDirectory()

        let (reports, summary) = try await run(
            try pipeline(
                ["s3://photos/a.jpg"], outputPath: "s3://photos/out/{stem}.webp", in: directory,
                environment: server.environment(home: directory.path, credentials: session)))
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        #expect(try server.get(bucket: "photos", key: "out/a.webp") != nil)

        // The same key without its token is not a key the server knows.
        let tokenless = AWSCredentials(accessKeyID: session.accessKeyID, secretAccessKey: session.secretAccessKey)
        let refused = try await run(
            try pipeline(
                ["s3://photos/a.jpg"], outputPath: "out/{stem}.webp", in: directory,
                environment: server.environment(home: directory.path, credentials: tokenless)))
        #expect(refused.summary.failed == 1)
        #expect(!(refused.reports.first?.failures.first?.reason.contains(session.sessionToken ?? "-") ?? true))
    }

    @Test func profileCredentialsAndConfigFilesAreRead() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.put(Self.photo, bucket: "photos", key: "a.jpg")
        let directory = try TemporaryDirectory()
        let credentialsFile = try directory.write(
            Data(
                """
                [default]
                aws_access_key_id = AKIANOTTHISONE000000
                aws_secret_access_key = wrong
                [catalogue]
                aws_access_key_id = \(server.credentials.accessKeyID)
                aws_secret_access_key = \(server.credentials.secretAccessKey)
                """.utf8), to: "aws/credentials")
        let configFile = try directory.write(
            Data(
                """
                [profile catalogue]
                region = \(MotoServer.region)
                endpoint_url = \(server.endpoint)
                """.utf8), to: "aws/config")
        let files = ["HOME": directory.path, "AWS_SHARED_CREDENTIALS_FILE": credentialsFile, "AWS_CONFIG_FILE": configFile]

        // The profile from AWS_PROFILE, with the endpoint from the config file.
        let byVariable = try await run(
            try pipeline(
                ["s3://photos/a.jpg"], outputPath: "out/{stem}.webp", in: directory,
                environment: files.merging(["AWS_PROFILE": "catalogue"]) { $1 }))
        #expect(byVariable.summary.succeeded == 1, "\(byVariable.reports.flatMap(\.failures))")

        // The profile the file's s3 section names wins over keys in the environment.
        let json = PipelineHarness.json(
            inputs: ["s3://photos/a.jpg"],
            outputs: [
                #"{"name": "small", "steps": [{"resize": {"width": 50}}], "encode": {"format": "webp"}, "path": "out2/{stem}.webp"}"#
            ], extra: #""s3": {"profile": "catalogue", "endpoint": "\#(server.endpoint)"}, "cache": {"enabled": false}"#)
        var named = try PipelineHarness.pipeline(json, in: directory)
        named.environment = files.merging(["AWS_ACCESS_KEY_ID": "AKIAWRONGWRONGWRONG0", "AWS_SECRET_ACCESS_KEY": "wrong"]) { $1 }
        let byFile = try await run(named)
        #expect(byFile.summary.succeeded == 1, "\(byFile.reports.flatMap(\.failures))")
    }
}
