import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An endpoint that is not quite S3: a web server's page where a listing or a stored object's
/// answer should be, a listing that cannot be followed to its end, an object stored
/// compressed. Each is an error that says what the server did, or is read as S3 means it; none
/// is taken for an empty bucket, a whole listing or a stored object.
struct S3MisbehavingServerTests {
    static let photo: Data = (try? Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))) ?? Data()

    /// A pipeline of the input `s3://photos/in/*.jpg` (or `inputs`) and one output at `outputPath`,
    /// on the endpoint `server`.
    func pipeline(
        on server: TestHTTPServer, inputs: [String] = ["s3://photos/in/*.jpg"], outputPath: String = "out/{stem}.png",
        in directory: TemporaryDirectory
    ) throws -> Pipeline {
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: inputs, outputs: [#"{"name": "small", "encode": {"format": "png"}, "path": "\#(outputPath)"}"#],
                extra: #""fetch": {"retries": 0}"#),
            in: directory)
        pipeline.environment = [
            "AWS_ACCESS_KEY_ID": "AKIAODDODDODDODD0001", "AWS_SECRET_ACCESS_KEY": "oddSecret",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(server.port)", "AWS_REGION": "us-east-1", "HOME": directory.path,
        ]
        return pipeline
    }

    /// A listing page of `keys`, truncated with `token` when one is given (or with none when
    /// `truncated` says so).
    static func page(_ keys: [String], truncated: Bool = false, token: String? = nil) -> TestHTTPServer.Response {
        let contents = keys.map { "<Contents><Key>\($0)</Key><ETag>\"e-\($0.count)\"</ETag><Size>\(photo.count)</Size></Contents>" }
        let next = token.map { "<NextContinuationToken>\($0)</NextContinuationToken>" } ?? ""
        let body =
            "<?xml version=\"1.0\"?><ListBucketResult><Name>photos</Name><IsTruncated>\(truncated || token != nil)</IsTruncated>"
            + next + contents.joined() + "</ListBucketResult>"
        return .init(headers: ["content-type": "application/xml"], body: Data(body.utf8))
    }

    /// The planning error, as text, or nil when the plan was made.
    func planningError(_ pipeline: Pipeline) -> String? {
        do {
            _ = try pipeline.plan()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aWebPageAnsweringAListingIsAnErrorNotAnEmptyBucket() throws {
        let server = try TestHTTPServer { _, _ in
            .init(headers: ["content-type": "text/html"], body: Data("<html><body>Welcome to nginx!</body></html>".utf8))
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let error = try #require(planningError(try pipeline(on: server, in: directory)))
        #expect(error.contains("cannot list s3://photos/in/*.jpg"), "\(error)")
        #expect(error.contains("is not an S3 listing: is the endpoint http://127.0.0.1:\(server.port) an S3 server?"), "\(error)")
        #expect(error.contains("text/html"), "\(error)")
    }

    @Test func aPageMarkedTruncatedWithoutATokenIsAnErrorNotTheWholeListing() throws {
        let server = try TestHTTPServer { _, _ in Self.page(["in/a.jpg"], truncated: true) }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let error = try #require(planningError(try pipeline(on: server, in: directory)))
        #expect(error.contains("marked truncated but gives no NextContinuationToken"), "\(error)")
        #expect(error.contains("the keys after the first 1 would be left out"), "\(error)")
    }

    @Test func aContinuationTokenGivenAgainIsAnErrorNotAListingForEver() throws {
        // Each page names a new key, and the same token
        let server = try TestHTTPServer { _, count in Self.page(["in/\(count).jpg"], token: "again") }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let error = try #require(planningError(try pipeline(on: server, in: directory)))
        #expect(error.contains("gave a continuation token it had given before"), "\(error)")
        // after the second page, the first to give it again
        #expect(server.requests.filter { $0.path.contains("list-type=2") }.count == 2)
    }

    @Test func aListingIsStoppedWhenPlanningIs() async throws {
        // Given an endpoint that holds every request for two minutes
        let silent = try SilentOrigin(seconds: 120)
        let directory = try TemporaryDirectory()
        let stopped = Locked(false)
        var pipeline = try pipeline(on: silent.server, in: directory)
        pipeline.stopsPlanning = { stopped.withLock { $0 } }
        let planning = Task.detached { [pipeline] in try pipeline.plan() }
        try await waitUntil("the listing is asked for") { !silent.server.requests.isEmpty }

        // When planning is stopped
        stopped.withLock { $0 = true }

        // Then the listing ends, and planning fails, saying so
        let result = await planning.result
        guard case .failure(let error) = result else {
            Issue.record("a stopped listing was planned")
            return
        }
        #expect("\(error)".contains("cannot list s3://photos/in/*.jpg: stopped"), "\(error)")
        #expect(silent.server.requests.count == 1)
    }

    @Test func anObjectStoredCompressedIsReadDecodedThoughItsListingCountsItCompressed() async throws {
        // Given a listed object stored gzipped, listed at its stored size and served so
        let stored = RemoteFetchTests.gzipStored(Self.photo)
        let etag = "\"0123456789abcdef0123456789abcdef\""
        let server = try TestHTTPServer { request, _ in
            if request.path.contains("list-type=2") {
                let listing =
                    "<?xml version=\"1.0\"?><ListBucketResult><Name>photos</Name><IsTruncated>false</IsTruncated><Contents>"
                    + "<Key>in/a.jpg</Key><ETag>\(etag)</ETag><Size>\(stored.count)</Size></Contents></ListBucketResult>"
                return .init(headers: ["content-type": "application/xml"], body: Data(listing.utf8))
            }
            return .init(headers: ["ETag": etag, "Content-Encoding": "gzip"], body: stored)
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()

        // When it runs, the object is made
        let result = try await pipeline(on: server, in: directory).run().collect()
        #expect(result.summary?.succeeded == 1, "\(result.reports.flatMap(\.failures))")
        #expect(try VipsImage.open(file: directory.path + "/out/a.png").size == ImageSize(width: 64, height: 48))
    }

    @Test func aSuccessWithoutAnETagAnsweringAnUploadIsAFailureNotAStoredObject() async throws {
        // Given an endpoint that answers every request 200 with a web page, and a local input
        let server = try TestHTTPServer { _, _ in
            .init(headers: ["content-type": "text/html"], body: Data("<html><body>Welcome to nginx!</body></html>".utf8))
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        try directory.write(Self.photo, to: "in/a.jpg")
        let pipeline = try pipeline(on: server, inputs: ["in/*.jpg"], outputPath: "s3://site/small/{stem}.png", in: directory)

        // When it runs, the upload fails, saying what the answer lacked
        let result = try await pipeline.run().collect()
        #expect(result.summary?.succeeded == 0 && result.summary?.failed == 1)
        let failure = try #require(result.reports.flatMap(\.failures).first)
        #expect(failure.stage == .encode, "\(failure)")
        #expect(failure.reason.contains("the answer has no ETag"), "\(failure)")
        #expect(failure.reason.contains("is the endpoint http://127.0.0.1:\(server.port) an S3 server?"), "\(failure)")
    }

    @Test func anOutputEndpointThatNeverAnswersIsGivenUpOnNotAskedForEveryOutput() async throws {
        // Given eight local inputs, one fetch at a time, and an output endpoint that holds every
        // request past the fetch timeout
        let silent = try SilentOrigin(seconds: 120)
        let directory = try TemporaryDirectory()
        for index in 1...8 { try directory.write(Self.photo, to: "in/a\(index).jpg") }
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["in/*.jpg"], outputs: [#"{"name": "small", "encode": {"format": "png"}, "path": "s3://site/{stem}.png"}"#],
                extra: #""fetch": {"retries": 0, "timeout": "300ms", "concurrency": 1}"#),
            in: directory)
        pipeline.environment = try self.pipeline(on: silent.server, in: directory).environment

        // When it runs
        let result = try await pipeline.run().collect()

        // Then every output fails, but once a few requests in a row went unanswered, the rest
        // fail without being sent: each output would otherwise ask (HEAD, then PUT) on its own
        #expect(result.summary?.failed == 8)
        #expect(silent.server.requests.count <= 8, "\(silent.server.requests.count) requests")
        let reasons = result.reports.flatMap(\.failures).map(\.reason)
        let given = "not sent: the endpoint http://127.0.0.1:\(silent.server.port) gave no answer to "
        #expect(reasons.contains { $0.contains(given) && $0.contains("timed out") }, "\(reasons)")
    }
}
