import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// What S3 failures say is what happened: which variable is missing, a credentials file read
/// whatever bytes its comments hold, a listing that failed and not an empty one, an empty object
/// said as an empty file is.
struct S3CredentialMessageTests {
    @Test func aNonUTF8ByteInACommentDoesNotHideTheKeys() throws {
        // Given a credentials file whose comment holds one Latin-1 byte
        let directory = try TemporaryDirectory()
        var file = Data("# caf".utf8)
        file.append(0xE9)
        file.append(Data("\n[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = filesecret\n".utf8))
        try directory.write(file, to: ".aws/credentials")
        // When the configuration is resolved, Then the keys are read
        let configuration = try S3Configuration.resolve(S3Settings(), environment: ["HOME": directory.path])
        #expect(configuration.credentials.accessKeyID == "FILEKEY")
    }

    @Test func anUnsetSecretAloneIsSaidAlone() throws {
        let directory = try TemporaryDirectory()
        let environment = ["HOME": directory.path, "AWS_ACCESS_KEY_ID": "ENVKEY"]
        do {
            _ = try S3Configuration.resolve(S3Settings(), environment: environment)
            Issue.record("resolved without a secret")
        } catch {
            #expect(error.message.contains("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"), "\(error.message)")
            #expect(!error.message.contains("are not set"), "\(error.message)")
        }
    }

    /// An endpoint with a query (from the environment, or the file) is refused as that, not as
    /// no http URL, and any password in it is hidden.
    @Test func anEndpointWithAQueryIsSaidToHaveOne() throws {
        let directory = try TemporaryDirectory()
        let environment = [
            "HOME": directory.path, "AWS_ACCESS_KEY_ID": "KEY", "AWS_SECRET_ACCESS_KEY": "SECRET",
            "AWS_ENDPOINT_URL": "http://ann:hunter2@127.0.0.1:9000/?region=x",
        ]
        do {
            _ = try S3Configuration.resolve(S3Settings(), environment: environment)
            Issue.record("resolved an endpoint with a query")
        } catch {
            #expect(
                error.message == #"the S3 endpoint "http://…@127.0.0.1:9000/?region=…" has a query or a fragment: "#
                    + "give the scheme, host and port (and a path at most)", "\(error.message)")
        }
        let json = PipelineHarness.json(
            inputs: ["s3://b/*.jpg"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""s3": {"endpoint": "http://127.0.0.1:9000#x"}"#)
        let refused = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory) }
        #expect(refused?.problems.map(\.path) == ["s3.endpoint"])
        #expect(refused?.problems.first?.message.contains("has a query or a fragment") == true, "\(refused?.problems ?? [])")
    }

    /// A profile the file names stands in place of the variables: the message does not call
    /// them unset when they are set.
    @Test func aMissingProfileNamedByTheFileDoesNotCallSetVariablesUnset() throws {
        let directory = try TemporaryDirectory()
        let environment = ["HOME": directory.path, "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret"]
        var settings = S3Settings()
        settings.profile = "nosuchprofile"
        do {
            _ = try S3Configuration.resolve(settings, environment: environment)
            Issue.record("resolved with a profile that does not exist")
        } catch {
            #expect(error.message.contains("s3.profile is used in place of AWS_ACCESS_KEY_ID"), "\(error.message)")
            #expect(error.message.contains(#"the profile "nosuchprofile""#), "\(error.message)")
            #expect(!error.message.contains("not set") && !error.message.contains("envsecret"), "\(error.message)")
        }
    }

    /// A profile the AWS command line turns into keys itself is said to be one pipeline does not
    /// read, with a way to give the keys, not only to have none.
    @Test(arguments: ["role_arn = arn:aws:iam::123456789012:role/deploy\nsource_profile = base", "credential_process = /bin/keys"])
    func aProfileOfAnAssumedRoleOrAProgramIsSaidToBeUnread(line: String) throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("[profile deploy]\n\(line)\n".utf8), to: ".aws/config")
        var settings = S3Settings()
        settings.profile = "deploy"
        do {
            _ = try S3Configuration.resolve(settings, environment: ["HOME": directory.path])
            Issue.record("resolved without keys")
        } catch {
            let key = String(line.prefix { $0 != " " })
            #expect(error.message.contains("it has \(key), which pipeline does not read"), "\(error.message)")
            #expect(error.message.contains("aws configure export-credentials --profile deploy --format env"), "\(error.message)")
        }
    }

    /// A bucket of another region, answered 301 with the region in a header, is said with the
    /// region and the setting to change.
    @Test func aBucketOfAnotherRegionIsSaidWithItsRegion() {
        let body =
            "<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed "
            + "using the specified endpoint.</Message><Endpoint>site.s3.eu-west-1.amazonaws.com</Endpoint></Error>"
        let response = DataResponse(status: 301, body: Data(body.utf8), headers: ["x-amz-bucket-region": "eu-west-1"])
        let error = S3Error(operation: "PutObject", bucket: "site", key: "a.png", response: response)
        #expect(error.code == "PermanentRedirect")
        #expect(
            error.description.hasSuffix(
                #"(the bucket "site" is in the region eu-west-1: set "s3": {"region": "eu-west-1"} or AWS_REGION)"#),
            "\(error.description)")
    }

    @Test func anUnreadableCredentialsFileIsSaid() throws {
        // Given a credentials file that is a folder (unreadable as a file, even by root)
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/.aws/credentials", withIntermediateDirectories: true)
        do {
            _ = try S3Configuration.resolve(S3Settings(), environment: ["HOME": directory.path])
            Issue.record("resolved without credentials")
        } catch {
            #expect(error.message.contains("cannot read \(directory.path)/.aws/credentials"), "\(error.message)")
        }
    }
}

@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct S3FailureMessageTests {
    let output = #"{"name": "small", "steps": [{"resize": {"width": 50}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#

    @Test func aFailedListingIsNotAlsoAnEmptyOne() throws {
        // Given a glob over a bucket that does not exist
        let server = try MotoServer()
        let directory = try TemporaryDirectory()
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["s3://nobucket/in/*.jpg"], outputs: [output]), in: directory)
        pipeline.environment = server.environment(home: directory.path)
        // When it is planned, Then the listing's failure is the error, and nothing says "matches no"
        do {
            _ = try pipeline.plan()
            Issue.record("planned a glob whose listing failed")
        } catch {
            let text = "\(error)"
            #expect(text.contains("cannot list s3://nobucket/in/*.jpg") && text.contains("NoSuchBucket"), "\(text)")
            #expect(!text.contains("matches no"), "\(text)")
        }
    }

    @Test func anEmptyObjectIsSaidAsAnEmptyFileIs() async throws {
        // Given an empty S3 object and an empty local file
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.put(Data(), bucket: "photos", key: "in/empty.jpg")
        let directory = try TemporaryDirectory()
        try directory.write(Data(), to: "local/empty.jpg")
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["s3://photos/in/empty.jpg", "local/empty.jpg"],
                outputs: [#"{"name": "small", "encode": {"format": "png"}, "path": "out/{dir}/{stem}.png"}"#]),
            in: directory)
        pipeline.environment = server.environment(home: directory.path)
        // When it runs
        let result = try await pipeline.run().collect()
        // Then both fail at fetch with the same reason
        let failures = result.reports.flatMap(\.failures)
        #expect(failures.count == 2)
        #expect(Set(failures.map(\.reason)) == ["the file is empty"], "\(failures)")
        #expect(failures.allSatisfy { $0.stage == .fetch })
    }
}

/// An S3 server's error message is quoted in failures, but not what it repeats of the
/// credentials the request was signed with: a gateway that echoes the request's headers must not
/// put the key, the secret or the session token in a report.
struct S3EchoedCredentialTests {
    @Test func aMessageRepeatingTheRequestsCredentialsIsQuotedWithoutThem() async throws {
        // Given an endpoint that refuses every request, quoting its signature and session token,
        // and the secret too (as a careless proxy might)
        let credentials = AWSCredentials(
            accessKeyID: "AKIAECHOECHOECHO0001", secretAccessKey: "echoedSecretAccessKey", sessionToken: "echoedSessionToken")
        let server = try TestHTTPServer { request, _ in
            let echoed = [request.headers["authorization"], request.headers["x-amz-security-token"], credentials.secretAccessKey]
            let message = "Refused: " + echoed.map { $0 ?? "" }.joined(separator: " | ")
            let body = "<?xml version=\"1.0\"?><Error><Code>InvalidToken</Code><Message>\(message)</Message></Error>"
            return TestHTTPServer.Response(status: 403, headers: ["content-type": "application/xml"], body: Data(body.utf8))
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["s3://photos/in/a.jpg"],
                outputs: [#"{"name": "small", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
                extra: #""fetch": {"retries": 0}"#),
            in: directory)
        pipeline.environment = [
            "AWS_ACCESS_KEY_ID": credentials.accessKeyID, "AWS_SECRET_ACCESS_KEY": credentials.secretAccessKey,
            "AWS_SESSION_TOKEN": credentials.sessionToken ?? "", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(server.port)",
            "AWS_REGION": "us-east-1", "HOME": directory.path,
        ]

        // When it runs
        let result = try await pipeline.run().collect()

        // Then the fetch fails quoting the server, with each credential hidden
        let reason = try #require(result.reports.flatMap(\.failures).first?.reason)
        #expect(reason.contains("InvalidToken") && reason.contains("Refused: "), "\(reason)")
        #expect(reason.contains("Credential=…/"), "the signature was not echoed: \(reason)")
        for secret in [credentials.accessKeyID, credentials.secretAccessKey, credentials.sessionToken ?? ""] {
            #expect(!reason.contains(secret), "\(reason)")
        }
    }
}
