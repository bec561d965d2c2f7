import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// S3 addresses, configuration and output keys, without a server.
@Suite struct S3PlanningTests {
    func plan(inputs: [String], outputPath: String) throws -> RunPlan {
        let directory = try TemporaryDirectory()
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: inputs,
                outputs: [
                    #"{"name": "small", "encode": {"format": "jpeg"}, "path": "\#(outputPath)"}"#
                ]), in: directory)
        pipeline.environment = PipelineHarness.offlineS3Environment(home: directory.path)
        return try pipeline.plan()
    }

    @Test func anOutputKeyThatWouldLeaveItsPrefixIsRefused() throws {
        // {dir} of a single object is its bucket and folders: ".." would climb; "." and ".." in
        // the key itself are refused too, since whoever copies the objects to a disk resolves them.
        let plan = try plan(
            inputs: ["s3://b/ok/a.jpg", "s3://b/up/../../a.jpg", "s3://b/double//a.jpg"],
            outputPath: "s3://site/thumbs/{dir}/{stem}.jpg")
        let listings = plan.items.flatMap(\.listings)
        #expect(listings[0].refusal == nil)
        #expect(listings[0].targets.first?.plannedPath == "s3://site/thumbs/b/ok/a.jpg")
        #expect(listings[1].refusal?.contains("would leave") == true)
        #expect(listings[2].targets.first?.plannedPath == "s3://site/thumbs/b/double/a.jpg")
        // An empty part in the template's own folders folds too.
        let folded = try self.plan(inputs: ["s3://b/ok/a.jpg"], outputPath: "s3://site/fold//{stem}.jpg")
        #expect(folded.items.first?.listings.first?.targets.first?.plannedPath == "s3://site/fold/a.jpg")
        let stem = try self.plan(inputs: ["s3://b/x/..jpg"], outputPath: "s3://site/thumbs/{stem}/{name}")
        #expect(stem.items.first?.listings.first?.refusal?.contains("would leave") == true)
    }

    @Test func aTemplateWithDotPartsOrAnotherBucketIsRefused() throws {
        let dots = try plan(inputs: ["s3://b/a.jpg"], outputPath: "s3://site/thumbs/../{stem}.jpg")
        #expect(dots.items.first?.listings.first?.refusal?.contains("would leave") == true)
        #expect {
            _ = try plan(inputs: ["s3://b/a.jpg"], outputPath: "s3://{stem}/x.jpg")
        } throws: { error in
            "\(error)".contains("outputs[0].path") && "\(error)".contains("must name its bucket in full")
        }
    }

    @Test func anOutputThatWouldReplaceItsInputObjectIsAnError() throws {
        #expect {
            _ = try plan(inputs: ["s3://b/a.jpg"], outputPath: "s3://b/{name}")
        } throws: { error in
            "\(error)".contains("would overwrite the input s3://b/a.jpg")
        }
    }

    @Test func anOutputThatWouldReplaceAnInputListedLaterIsAnError() throws {
        // The output of the first input is the second input's object, which planning meets after it.
        #expect {
            _ = try plan(inputs: ["s3://b/one/a.jpg", "s3://b/a.jpg"], outputPath: "s3://b/{name}")
        } throws: { error in
            "\(error)".contains("output \"small\" of s3://b/one/a.jpg would overwrite the input s3://b/a.jpg")
        }
    }

    @Test func twoInputsWritingOneObjectAreNamedTogether() throws {
        // S3 keys are compared where the plan compares outputs: they have no real path to resolve.
        #expect {
            _ = try plan(inputs: ["s3://b/one/a.jpg", "s3://b/two/a.jpg"], outputPath: "s3://site/{stem}.jpg")
        } throws: { error in
            "\(error)".contains(
                "output \"small\" of s3://b/two/a.jpg and output \"small\" of s3://b/one/a.jpg would both write s3://site/a.jpg")
        }
    }

    @Test func aBucketOrFolderIsNotAnObject() throws {
        #expect {
            _ = try plan(inputs: ["s3://photos/in/"], outputPath: "out/{stem}.jpg")
        } throws: { error in
            "\(error)".contains("inputs[0]") && "\(error)".contains("s3://photos/in/**/*.jpg")
        }
    }

    @Test func globsMatchKeysAsTheyMatchPaths() {
        let match = { (glob: String, key: String) in
            InputEnumerator.matches(
                glob.split(separator: "/").map(String.init)[...],
                key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)[...])
        }
        #expect(match("**/*.jpg", "a.jpg"))
        #expect(match("**/*.jpg", "x/y/a.jpg"))
        #expect(!match("**/*.jpg", "x/.hidden/a.jpg"))
        #expect(!match("*.jpg", "x/a.jpg"))
        #expect(!match("*.jpg", ".a.jpg"))
        #expect(match("[ab]?/*.png", "b1/c.png"))
        #expect(!match("**/*.jpg", "x/a.png"))
    }

    @Test func aKeyGlobTakesInTheKeysItsListingWould() throws {
        // The parts below the folder before the first wildcard (a brace counts), as an input's subfolder
        let glob = try #require(S3KeyGlob(pattern: "s3://b/in/{x,y}/**/*.jpg", caseInsensitive: false))
        #expect(glob.matchedParts(of: "in/x/a.jpg") == ["x", "a.jpg"])
        #expect(glob.matchedParts(of: "in/y/small/a.jpg") == ["y", "small", "a.jpg"])
        #expect(glob.matchedParts(of: "in/z/a.jpg") == nil)
        #expect(glob.matchedParts(of: "in/x/a.png") == nil)
        #expect(glob.matchedParts(of: "in/x/folder/") == nil)
        // One object's address is no glob
        #expect(S3KeyGlob(pattern: "s3://b/in/a.jpg", caseInsensitive: false) == nil)
    }

    @Test func queriesAreSortedAndEncodedForSigning() {
        let client = S3Client(
            configuration: S3Configuration(
                credentials: AWSCredentials(accessKeyID: "k", secretAccessKey: "s"),
                region: "eu-west-1", endpoint: "http://127.0.0.1:9000"),
            fetcher: RemoteFetcher(
                loader: CurlDataLoader(),
                settings: FetchSettings(
                    concurrency: 1, maxBytes: 1, timeout: 1, connectTimeout: 1, retries: 0, headers: [:], userAgent: "t", maxRedirects: 0)))
        #expect(
            client.url(S3Location(bucket: "b", key: "a b/ü+.jpg"), query: [("prefix", "x y/"), ("list-type", "2")])
                == "http://127.0.0.1:9000/b/a%20b/%C3%BC%2B.jpg?list-type=2&prefix=x%20y%2F")
        let aws = S3Client(
            configuration: S3Configuration(credentials: client.configuration.credentials, region: "eu-west-1", endpoint: nil),
            fetcher: client.fetcher)
        #expect(aws.url(S3Location(bucket: "b", key: "k.jpg")) == "https://b.s3.eu-west-1.amazonaws.com/k.jpg")
        #expect(aws.url(S3Location(bucket: "b.c", key: "k.jpg")) == "https://s3.eu-west-1.amazonaws.com/b.c/k.jpg")
    }

    @Test func configurationIsResolvedAsAWSToolsResolveIt() throws {
        let directory = try TemporaryDirectory()
        try directory.write(
            Data(
                "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = filesecret\n[p]\naws_access_key_id = PKEY\naws_secret_access_key = psecret\naws_session_token = ptoken\n"
                    .utf8), to: ".aws/credentials")
        try directory.write(
            Data("[default]\nregion = eu-central-1\n[profile p]\nregion = ap-south-1\nendpoint_url = http://127.0.0.1:9/\n".utf8),
            to: ".aws/config")
        let home = ["HOME": directory.path]

        let fromFiles = try S3Configuration.resolve(S3Settings(), environment: home)
        #expect(fromFiles.credentials.accessKeyID == "FILEKEY")
        #expect(fromFiles.region == "eu-central-1")
        #expect(fromFiles.endpoint == nil)

        let fromVariables = try S3Configuration.resolve(
            S3Settings(),
            environment: home.merging([
                "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_SESSION_TOKEN": "envtoken",
                "AWS_DEFAULT_REGION": "us-west-2", "AWS_ENDPOINT_URL": "http://localhost:1",
            ]) { $1 })
        #expect(fromVariables.credentials == AWSCredentials(accessKeyID: "ENVKEY", secretAccessKey: "envsecret", sessionToken: "envtoken"))
        #expect(fromVariables.region == "us-west-2")
        #expect(fromVariables.endpoint == "http://localhost:1")

        let profile = try S3Configuration.resolve(S3Settings(), environment: home.merging(["AWS_PROFILE": "p"]) { $1 })
        #expect(profile.credentials.sessionToken == "ptoken")
        #expect(profile.region == "ap-south-1")
        #expect(profile.endpoint == "http://127.0.0.1:9")

        let file = try S3Configuration.resolve(
            S3Settings(profile: "p", region: "sa-east-1", endpoint: "https://minio.example"),
            environment: home.merging([
                "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "x",
                "AWS_ENDPOINT_URL_S3": "http://other",
            ]) { $1 })
        #expect(file.credentials.accessKeyID == "PKEY")
        #expect(file.region == "sa-east-1")
        #expect(file.endpoint == "https://minio.example")

        #expect(throws: S3Configuration.Failure.self) {
            try S3Configuration.resolve(S3Settings(profile: "nobody"), environment: home)
        }
        // What describes credentials never holds the secret or the token.
        #expect(!"\(profile.credentials) \(profile)".contains("psecret"))
        #expect(!"\(profile.credentials) \(profile)".contains("ptoken"))
    }
}
